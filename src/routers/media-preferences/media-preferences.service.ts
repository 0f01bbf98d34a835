import { execSql, runHotRead, runSql } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import type { MediaPreferencesInput, MediaPreferencesOutput } from './media-preferences.schemas.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import {
  MEDIA_PREFERENCE_FIELDS,
  type MediaPreferenceField,
  type MediaPreferencesRow,
  mediaPreferencesQuery,
  saveMediaPreferencesQuery,
} from './media-preferences.queries.js';

function toOutput(userId: string, row: MediaPreferencesRow | undefined): MediaPreferencesOutput {
  const value = (f: MediaPreferenceField) => (row ? Boolean(row[MEDIA_PREFERENCE_FIELDS[f].column]) : MEDIA_PREFERENCE_FIELDS[f].default);
  return {
    userId,
    showImages: value('showImages'),
    showVideos: value('showVideos'),
    showAudio: value('showAudio'),
    autoPlayVideos: value('autoPlayVideos'),
    autoPlayAudio: value('autoPlayAudio'),
    updatedAtUtc: row?.updated_at_utc ?? null,
  };
}

/** The caller's media preferences, or the defaults when never saved (reading writes nothing). */
export async function getMediaPreferences(ctx: ServiceContext) {
  const userId = ctx.user.id;
  const [row] = await runHotRead<MediaPreferencesRow>(ctx, mediaPreferencesQuery(userId), { prepared: true });
  return toOutput(userId, row);
}

/** Saves the given fields; fields left out keep their value (`saveMediaPreferencesQuery`). */
export async function updateMediaPreferences(ctx: ServiceContext, input: MediaPreferencesInput) {
  const userId = ctx.user.id;
  const [row] = await runSql<MediaPreferencesRow>(ctx.em, saveMediaPreferencesQuery(userId, input));
  return toOutput(userId, row);
}

/** Account deletion: the media preferences go. */
export const eraseMediaPreferences: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from user_media_preferences where user_id = ?', [userId]);
};
