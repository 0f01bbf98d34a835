import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { meOutput } from './users.schemas.js';
import { me } from './users.service.js';

export const usersRouter = router({
  me: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/users/me', tags: ['Users'], summary: 'The authenticated user' } })
    .output(meOutput)
    .query(({ ctx }) => me(ctx)),
});
