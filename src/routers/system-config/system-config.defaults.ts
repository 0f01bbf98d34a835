/**
 * The settings the code reads, with their defaults. Seeded on start (missing keys only, so an operator's change
 * survives restarts) and used to validate PUTs of these keys.
 */
export interface SystemConfigDefault {
  key: string;
  value: string;
  category: string;
  description: string;
  /** Accepted integer range; every key read today is a whole number. */
  integer: { min: number; max: number };
}

export const SYSTEM_CONFIG_DEFAULTS: readonly SystemConfigDefault[] = [
  {
    key: 'JoinRequests:MaxCreationsPerWindow',
    value: '3',
    category: 'JoinRequests',
    description: 'Join-request creations (create, cancel, recreate) allowed per user and territory within the window.',
    integer: { min: 1, max: 1000 },
  },
  {
    key: 'JoinRequests:WindowHours',
    value: '24',
    category: 'JoinRequests',
    description: 'Length in hours of the join-request creation window.',
    integer: { min: 1, max: 24 * 365 },
  },
  {
    key: 'Events:NotifyingCreationsPerDay',
    value: '3',
    category: 'Events',
    description: 'Events of one creator in one territory within 24 hours that notify its residents; later ones are created but notify nobody.',
    integer: { min: 0, max: 1000 },
  },
  {
    key: 'Media:UnattachedRetentionHours',
    value: '24',
    category: 'Media',
    description: 'Hours an upload may stay attached to nothing before the media-cleanup job removes it.',
    integer: { min: 1, max: 24 * 365 },
  },
  {
    key: 'Media:UserQuotaBytes',
    value: String(1024 * 1024 * 1024),
    category: 'Media',
    description:
      'Bytes one user may hold in storage (live media and evidence documents); an upload that would pass it is refused with 413 STORAGE_QUOTA_EXCEEDED.',
    integer: { min: 0, max: 1024 * 1024 * 1024 * 1024 },
  },
  {
    key: 'Users:DeletedAccountRetentionDays',
    value: '180',
    category: 'Users',
    description:
      'Days a deleted account keeps its national id, foreign document and provider identity (legal retention); a sign-up with them is refused until then.',
    integer: { min: 0, max: 3650 },
  },
  {
    key: 'Notifications:DispatchBatchSize',
    value: '100',
    category: 'Notifications',
    description: 'Outbox rows the notification dispatcher delivers per run.',
    integer: { min: 1, max: 10_000 },
  },
  {
    key: 'Reports:DedupWindowHours',
    value: '24',
    category: 'Reports',
    description: 'Hours within which a repeated report of the same target by the same person returns the existing report.',
    integer: { min: 0, max: 24 * 365 },
  },
  {
    key: 'Reports:ThresholdReporters',
    value: '3',
    category: 'Reports',
    description: 'Distinct reporters of one target within the threshold window that trigger the automatic sanction.',
    integer: { min: 1, max: 1000 },
  },
  {
    key: 'Reports:ThresholdWindowDays',
    value: '7',
    category: 'Reports',
    description: 'Days back the distinct reporters of a target are counted for the automatic sanction.',
    integer: { min: 1, max: 365 },
  },
  {
    key: 'Reports:RestrictionDays',
    value: '7',
    category: 'Reports',
    description: 'Days a sanctioned user may not create content (posts, events, items, messages) in the territory.',
    integer: { min: 1, max: 365 },
  },
];

export const knownConfigKey = (key: string) => SYSTEM_CONFIG_DEFAULTS.find((d) => d.key === key);
