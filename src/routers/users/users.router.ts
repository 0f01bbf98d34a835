import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { z } from 'zod';
import { deleteAccountInput, meOutput } from './users.schemas.js';
import { deleteAccount, me } from './users.service.js';

export const usersRouter = router({
  me: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/users/me', tags: ['Users'], summary: 'The authenticated user' } })
    .output(meOutput)
    .query(({ ctx }) => me(ctx)),

  deleteMe: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/users/me',
        tags: ['Users'],
        summary: 'Delete my account (erasure)',
        description:
          'Needs a step-up: with 2FA on, a current `code` or a `recoveryCode`; without it, a sign-in within the last 10 minutes (else 403 ' +
          'STEP_UP_REQUIRED). Ends every session and open socket at once, erases or anonymises personal data (profile, documents and ' +
          'evidence files, media, preferences, interests, blocks, memberships, notifications, pending requests) and keeps posts and ' +
          'their threads under an anonymous name. The national id stays reserved until the retention period in system config ' +
          '(`Users:DeletedAccountRetentionDays`) ends. The last SYSTEM_ADMIN cannot delete their account (409 LAST_SYSTEM_ADMIN).',
      },
      successStatus: 204,
    })
    .input(deleteAccountInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deleteAccount(ctx, input)),
});
