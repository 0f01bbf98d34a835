import { execSql } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import type { MediaPreferencesInput, MediaPreferencesOutput } from './media-preferences.schemas.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

type Field = keyof MediaPreferencesInput;

/** Field -> column, and the default of each (also the table's column defaults). */
const FIELDS: Record<Field, { column: string; default: boolean }> = {
  showImages: { column: 'show_images', default: true },
  showVideos: { column: 'show_videos', default: true },
  showAudio: { column: 'show_audio', default: true },
  autoPlayVideos: { column: 'auto_play_videos', default: false },
  autoPlayAudio: { column: 'auto_play_audio', default: false },
};
const NAMES = Object.keys(FIELDS) as Field[];
const RETURNING = `user_id, ${NAMES.map((f) => FIELDS[f].column).join(', ')}, updated_at_utc`;

type Row = Record<string, unknown> & { user_id: string; updated_at_utc: Date | string | null };

function toOutput(userId: string, row: Row | undefined): MediaPreferencesOutput {
  const value = (f: Field) => (row ? Boolean(row[FIELDS[f].column]) : FIELDS[f].default);
  return {
    userId,
    showImages: value('showImages'),
    showVideos: value('showVideos'),
    showAudio: value('showAudio'),
    autoPlayVideos: value('autoPlayVideos'),
    autoPlayAudio: value('autoPlayAudio'),
    updatedAtUtc: row?.updated_at_utc ? new Date(row.updated_at_utc).toISOString() : null,
  };
}

/** The caller's media preferences, or the defaults when never saved (reading writes nothing). */
export async function getMediaPreferences(ctx: ServiceContext) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const rows = await execSql<Row>(em, `select ${RETURNING} from user_media_preferences where user_id = ?`, [userId]);
  return toOutput(userId, rows[0]);
}

/**
 * Merges the given fields into the stored preferences (defaults for the rest on first save). One upsert that
 * touches only the given columns, so concurrent partial updates of different fields both apply.
 */
export async function updateMediaPreferences(ctx: ServiceContext, input: MediaPreferencesInput) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const given = NAMES.filter((f) => input[f] !== undefined);
  const set = [...given.map((f) => `${FIELDS[f].column} = excluded.${FIELDS[f].column}`), 'updated_at_utc = excluded.updated_at_utc'];
  const rows = await execSql<Row>(
    em,
    `insert into user_media_preferences (user_id, created_at_utc, updated_at_utc, ${NAMES.map((f) => FIELDS[f].column).join(', ')})
     values (?, now(), now(), ${NAMES.map(() => '?').join(', ')})
     on conflict (user_id) do update set ${set.join(', ')}
     returning ${RETURNING}`,
    [userId, ...NAMES.map((f) => input[f] ?? FIELDS[f].default)],
  );
  return toOutput(userId, rows[0]);
}

/** Account deletion: the media preferences go. */
export const eraseMediaPreferences: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from user_media_preferences where user_id = ?', [userId]);
};
