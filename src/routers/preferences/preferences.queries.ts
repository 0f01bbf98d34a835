/**
 * Reads of preferences for other domains: the notification dispatcher honours each user's flags, chat asks whom a
 * user accepts direct messages from.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserPreferences, type Visibility } from '../../entities/preferences.entity.js';
import { NOTIFICATION_TYPES, type NotificationType } from '../../entities/notification.entity.js';

/** The entity's default (`contactVisibility` of a new preferences row), for users who never saved any. */
const DEFAULT_CONTACT_VISIBILITY: Visibility = 'ResidentsOnly';

/** Stored flags are sparse: every type not explicitly switched off is on. */
export function flagsOf(stored: Record<string, unknown> | null | undefined): Record<NotificationType, boolean> {
  return Object.fromEntries(NOTIFICATION_TYPES.map((type) => [type, stored?.[type] !== false])) as Record<NotificationType, boolean>;
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
