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
    key: 'Reports:DedupWindowMinutes',
    value: '60',
    category: 'Reports',
    description: 'A repeated report of the same target by the same user within this many minutes is not recorded again.',
    integer: { min: 0, max: 60 * 24 * 365 },
  },
  {
    key: 'Reports:AutoSanctionThreshold',
    value: '5',
    category: 'Reports',
    description: 'Reports by distinct users against one target within the threshold window that trigger an automatic sanction.',
    integer: { min: 1, max: 100_000 },
  },
  {
    key: 'Reports:ThresholdWindowHours',
    value: '24',
    category: 'Reports',
    description: 'Length in hours of the window in which reports count towards the automatic sanction threshold.',
    integer: { min: 1, max: 24 * 365 },
  },
  {
    key: 'Notifications:DispatchBatchSize',
    value: '100',
    category: 'Notifications',
    description: 'Outbox rows the notification dispatcher delivers per run.',
    integer: { min: 1, max: 10_000 },
  },
];

export const knownConfigKey = (key: string) => SYSTEM_CONFIG_DEFAULTS.find((d) => d.key === key);
