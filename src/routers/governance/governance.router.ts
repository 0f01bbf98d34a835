import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { governanceProfileOutput } from './governance.schemas.js';
import * as governance from './governance.service.js';

export const governanceRouter = router({
  myProfile: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/users/me/profile/governance', tags: ['Governance'], summary: 'My votes and moderation contributions' },
    })
    .output(governanceProfileOutput)
    .query(({ ctx }) => governance.myGovernanceProfile(ctx)),
});
