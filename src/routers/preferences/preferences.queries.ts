/**
 * Reads of preferences: the caller's own row (created on first read), and those of other domains: the notification
 * dispatcher honours each user's flags, chat asks whom a user accepts direct messages from.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { managerOf } from '../../db/request-manager.js';
import { execSql, type HotReadSource, isoColumn, runHotRead } from '../../db/sql.js';
import { UserPreferences, type Visibility } from '../../entities/preferences.entity.js';
import { ALWAYS_DELIVERED, NOTIFICATION_TYPES, type NotificationType } from '../../entities/notification.entity.js';

export interface PreferencesRow {
  user_id: string;
  profile_visibility: Visibility;
  contact_visibility: Visibility;
  share_location: boolean;
  show_memberships: boolean;
  notifications: Record<string, unknown> | null;
  updated_at_utc: string;
}

/** A preferences row as the API answers it: selected, or returned by a write. */
export const PREFERENCES_COLUMNS = `user_id, profile_visibility, contact_visibility, share_location, show_memberships, notifications,
  ${isoColumn('updated_at_utc')} as updated_at_utc`;

/**
 * The user's preferences, created with the defaults (the table's column defaults) on first read, race-safe. Looked
 * up first (a prepared key lookup), so reading an existing row writes nothing.
 */
export async function ensurePreferences(source: HotReadSource, userId: string): Promise<PreferencesRow> {
  const rowOf = { sql: `select ${PREFERENCES_COLUMNS} from user_preferences where user_id = ?::uuid`, params: [userId] };
  const [found] = await runHotRead<PreferencesRow>(source, rowOf, { prepared: true });
  if (found) return found;
  // Two first reads at once: the second insert does nothing and both read the same row.
  await execSql(
    managerOf(source),
    'insert into user_preferences (user_id, created_at_utc, updated_at_utc) values (?, now(), now()) on conflict (user_id) do nothing',
    [userId],
  );
  const [created] = await runHotRead<PreferencesRow>(source, rowOf, { prepared: true });
  if (!created) throw new Error('user_preferences row missing after insert');
  return created;
}

/** The entity's default (`contactVisibility` of a new preferences row), for users who never saved any. */
const DEFAULT_CONTACT_VISIBILITY: Visibility = 'ResidentsOnly';

/** Stored flags are sparse: every type not explicitly switched off is on. */
export function flagsOf(stored: Record<string, unknown> | null | undefined): Record<NotificationType, boolean> {
  // A type always delivered reads as on, whatever an older version of the API stored for it.
  return Object.fromEntries(NOTIFICATION_TYPES.map((type) => [type, ALWAYS_DELIVERED.includes(type) || stored?.[type] !== false])) as Record<
    NotificationType,
    boolean
  >;
}

/**
 * The notification flags of each user (the outbox dispatcher filters recipients with it). Users without a
 * preferences row get every flag on; nothing is written.
 */
export async function notificationPreferencesOf(em: EntityManager, userIds: string[]): Promise<Map<string, Record<NotificationType, boolean>>> {
  const ids = [...new Set(userIds)];
  const result = new Map<string, Record<NotificationType, boolean>>();
  if (ids.length === 0) return result;
  const rows = await em.find(UserPreferences, { userId: { $in: ids } }, { fields: ['userId', 'notifications'] });
  const stored = new Map(rows.map((row) => [row.userId, row.notifications as Record<string, unknown>]));
  for (const id of ids) result.set(id, flagsOf(stored.get(id)));
  return result;
}

/** Who may contact the user (direct messages): their stored choice, else the default of a preferences row. */
export async function contactVisibilityOf(em: EntityManager, userId: string): Promise<Visibility> {
  const row = await em.findOne(UserPreferences, { userId }, { fields: ['contactVisibility'] });
  return row?.contactVisibility ?? DEFAULT_CONTACT_VISIBILITY;
}
