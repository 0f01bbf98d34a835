import { isTrackedEnvelope, tracked, type TrackedEnvelope } from '@trpc/server';
import { z } from 'zod';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { NOTIFICATION_TYPES } from '../../entities/notification.entity.js';

export const notificationOutput = z
  .object({
    id: z.uuid(),
    type: z.enum(NOTIFICATION_TYPES),
    title: z.string(),
    body: z.string(),
    /** Ids of what caused it (territoryId, joinRequestId, postId...). */
    data: z.record(z.string(), z.unknown()),
    createdAtUtc: z.iso.datetime(),
    readAtUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Notification' });
export type NotificationOutput = z.infer<typeof notificationOutput>;

export const listInput = z.object(skipTakeInput(50));
export const pagedInput = z.object(pageInput);
export const notificationPage = pagedOutput(notificationOutput).meta({ id: 'NotificationPage' });
export const byIdInput = z.object({ id: zId });

/** `lastEventId` is sent back by tRPC clients on reconnect: what arrived after it is replayed first. */
export const onNewInput = z.object({ lastEventId: zId.nullish() }).optional();

/**
 * Output validation of a tracked subscription (the tRPC documentation's `zAsyncIterable`, for zod 4): every
 * yielded `tracked(id, data)` has its data parsed with the item schema.
 */
export function zTrackedAsyncIterable<T extends z.ZodType>(item: T) {
  return z
    .custom<AsyncIterable<TrackedEnvelope<z.input<T>>>>((value) => !!value && typeof value === 'object' && Symbol.asyncIterator in value)
    .transform(async function* (iterable): AsyncGenerator<TrackedEnvelope<z.output<T>>, void, unknown> {
      for await (const envelope of iterable) {
        if (!isTrackedEnvelope(envelope)) throw new Error('Subscription values must be tracked envelopes.');
        const [id, data] = envelope;
        yield tracked(id, await item.parseAsync(data));
      }
    });
}
