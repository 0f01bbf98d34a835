import { z } from 'zod';
import { VISIBILITIES } from '../../entities/preferences.entity.js';
import { ALWAYS_DELIVERED, NOTIFICATION_TYPES, type NotificationType } from '../../entities/notification.entity.js';

const CANONICAL_VISIBILITY = new Map(VISIBILITIES.map((v) => [v.toLowerCase(), v]));

/** Public | ResidentsOnly | Private; input is case-insensitive and ignores `_` (RESIDENTS_ONLY), output canonical. */
export const zVisibility = z.preprocess(
  (v) => (typeof v === 'string' ? (CANONICAL_VISIBILITY.get(v.replace(/_/g, '').toLowerCase()) ?? v) : v),
  z.enum(VISIBILITIES),
);

const notificationFlags = <T extends z.ZodType>(flag: T) => Object.fromEntries(NOTIFICATION_TYPES.map((type) => [type, flag])) as Record<NotificationType, T>;

export const notificationFlagsOutput = z.object(notificationFlags(z.boolean())).meta({ id: 'NotificationPreferences' });

export const preferencesOutput = z
  .object({
    userId: z.uuid(),
    profileVisibility: z.enum(VISIBILITIES),
    contactVisibility: z.enum(VISIBILITIES),
    shareLocation: z.boolean(),
    showMemberships: z.boolean(),
    /** One flag per notification type: false switches that type off. */
    notifications: notificationFlagsOutput,
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'UserPreferences' });
export type PreferencesOutput = z.infer<typeof preferencesOutput>;

export const privacyInput = z.object({
  profileVisibility: zVisibility,
  contactVisibility: zVisibility,
  shareLocation: z.boolean(),
  showMemberships: z.boolean(),
});
export type PrivacyInput = z.infer<typeof privacyInput>;

/**
 * Any subset of the flags; an unknown type is a 400 rather than silently ignored, and so is switching off a type that
 * is always delivered (SECURITY_ALERT: it was accepted, shown off, and delivered all the same).
 */
export const notificationsInput = z.strictObject(
  Object.fromEntries(
    NOTIFICATION_TYPES.map((type) => [
      type,
      ALWAYS_DELIVERED.includes(type) ? z.literal(true, { error: 'cannot be switched off: it is always delivered' }).optional() : z.boolean().optional(),
    ]),
  ) as Record<NotificationType, z.ZodOptional<z.ZodBoolean | z.ZodLiteral<true>>>,
);
export type NotificationsInput = z.infer<typeof notificationsInput>;
