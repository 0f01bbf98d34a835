/** SQL of the media preferences: the caller's row, read and saved (other domains never read it). */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import type { MediaPreferencesInput } from './media-preferences.schemas.js';

export type MediaPreferenceField = keyof MediaPreferencesInput;

/** Field -> column, and the default of each (also the table's column defaults). */
export const MEDIA_PREFERENCE_FIELDS: Record<MediaPreferenceField, { column: string; default: boolean }> = {
  showImages: { column: 'show_images', default: true },
  showVideos: { column: 'show_videos', default: true },
  showAudio: { column: 'show_audio', default: true },
  autoPlayVideos: { column: 'auto_play_videos', default: false },
  autoPlayAudio: { column: 'auto_play_audio', default: false },
};
const NAMES = Object.keys(MEDIA_PREFERENCE_FIELDS) as MediaPreferenceField[];
const COLUMNS = NAMES.map((f) => MEDIA_PREFERENCE_FIELDS[f].column).join(', ');
/** A row as the API answers it: selected, or returned by a save. */
const RETURNING = `user_id, ${COLUMNS}, ${isoColumn('updated_at_utc')} as updated_at_utc`;

export type MediaPreferencesRow = Record<string, unknown> & { user_id: string; updated_at_utc: string | null };

/** The user's stored media preferences (a key lookup); no row while they never saved any. */
export function mediaPreferencesQuery(userId: string): SqlQuery {
  return { sql: `select ${RETURNING} from user_media_preferences where user_id = ?::uuid`, params: [userId] };
}

/**
 * Merges the given fields into the stored preferences (defaults for the rest on first save). One upsert that
 * touches only the given columns, so concurrent partial updates of different fields both apply.
 */
export function saveMediaPreferencesQuery(userId: string, input: MediaPreferencesInput): SqlQuery {
  const given = NAMES.filter((f) => input[f] !== undefined);
  const set = [
    ...given.map((f) => `${MEDIA_PREFERENCE_FIELDS[f].column} = excluded.${MEDIA_PREFERENCE_FIELDS[f].column}`),
    'updated_at_utc = excluded.updated_at_utc',
  ];
  return {
    sql: `insert into user_media_preferences (user_id, created_at_utc, updated_at_utc, ${COLUMNS})
     values (?, now(), now(), ${NAMES.map(() => '?').join(', ')})
     on conflict (user_id) do update set ${set.join(', ')}
     returning ${RETURNING}`,
    params: [userId, ...NAMES.map((f) => input[f] ?? MEDIA_PREFERENCE_FIELDS[f].default)],
  };
}
