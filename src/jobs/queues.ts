import { z } from 'zod';

/**
 * Every pg-boss queue, with the schema of its payload. Handlers live in `<name>.job.ts` and are registered in
 * boss.ts; later domains add their queues here.
 */
export const QUEUES = {
  /** Deletes expired 2FA challenges and refresh tokens. */
  authCleanup: { name: 'auth-cleanup', payload: z.object({}).strict(), cron: '*/15 * * * *' },
  /**
   * Drains the notification outbox. Started right after a commit that wrote outbox rows (NOTIFY outbox_pending,
   * see src/jobs/outbox-dispatch.job.ts); the per-minute schedule is the backstop.
   */
  outboxDispatch: { name: 'outbox-dispatch', payload: z.object({}).strict(), cron: '* * * * *' },
  /** Removes the stored bytes of media marked deleted (deleting a post marks its media inside its transaction). */
  mediaCleanup: { name: 'media-cleanup', payload: z.object({}).strict(), cron: '*/5 * * * *' },
} as const;

export type QueueKey = keyof typeof QUEUES;
export const QUEUE_NAMES: string[] = Object.values(QUEUES).map((q) => q.name);
