/**
 * Every notification type. Each has one preference flag (`notifications.<type>` in the user's preferences, default
 * true) that the outbox dispatcher honours.
 */
export const NOTIFICATION_TYPES = [
  'POST_CREATED',
  'REPORT_CREATED',
  'INQUIRY_RECEIVED',
  'JOIN_REQUEST_RECEIVED',
  'JOIN_REQUEST_DECIDED',
  'EVENT_CREATED',
  'ALERT_VALIDATED',
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
