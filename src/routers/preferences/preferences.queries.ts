/** Reads of preferences for other domains (the notification dispatcher honours each user's flags). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { UserPreferences } from '../../entities/preferences.entity.js';
import { NOTIFICATION_TYPES, type NotificationType } from '../../entities/notification.entity.js';

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
