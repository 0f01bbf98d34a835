import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { notificationsInput, preferencesOutput, privacyInput } from './preferences.schemas.js';
import * as preferences from './preferences.service.js';

const TAGS = ['Preferences'];

export const preferencesRouter = router({
  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/users/me/preferences', tags: TAGS, summary: 'My preferences (created with the defaults when absent)' } })
    .output(preferencesOutput)
    .query(({ ctx }) => preferences.getPreferences(ctx)),

  updatePrivacy: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/v1/users/me/preferences/privacy', tags: TAGS, summary: 'Replace my privacy preferences' } })
    .input(privacyInput)
    .output(preferencesOutput)
    .mutation(({ ctx, input }) => preferences.updatePrivacy(ctx, input)),

  updateNotifications: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/v1/users/me/preferences/notifications',
        tags: TAGS,
        summary: 'Switch notification types on or off',
        description: 'A partial object of one boolean per notification type; types left out keep their value.',
      },
    })
    .input(notificationsInput)
    .output(preferencesOutput)
    .mutation(({ ctx, input }) => preferences.updateNotifications(ctx, input)),
});
