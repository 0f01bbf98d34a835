import { z } from 'zod';
import { WORK_ITEM_OUTCOMES, WORK_ITEM_STATUSES, WORK_ITEM_TYPES } from '../../entities/work-item.entity.js';
import { lenientEnum } from '../../platform/enums.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zOptionalText } from '../../platform/text.js';

export const workItemOutput = z
  .object({
    id: z.uuid(),
    type: z.enum(WORK_ITEM_TYPES),
    status: z.enum(WORK_ITEM_STATUSES),
    territoryId: z.uuid().nullable(),
    subjectType: z.string(),
    subjectId: z.uuid(),
    payload: z.record(z.string(), z.unknown()),
    requiredPermission: z.string().nullable(),
    requiredCapability: z.string().nullable(),
    outcome: z.enum(WORK_ITEM_OUTCOMES).nullable(),
    notes: z.string().nullable(),
    createdAtUtc: z.iso.datetime(),
    completedAtUtc: z.iso.datetime().nullable(),
    completedByUserId: z.uuid().nullable(),
  })
  .meta({ id: 'WorkItem' });
export type WorkItemOutput = z.infer<typeof workItemOutput>;

export const workItemPage = pagedOutput(workItemOutput).meta({ id: 'WorkItemPage' });

/** The queue's filters, shared by the listing and its `/paged` variant. */
const workItemFilter = {
  type: lenientEnum(WORK_ITEM_TYPES).optional(),
  status: lenientEnum(WORK_ITEM_STATUSES).optional(),
};

/** Non-paged listing: `skip`/`take` (default 20), answering an array. */
export const listInput = z.object({ ...workItemFilter, ...skipTakeInput() });

/** `/paged` variant: `pageNumber`/`pageSize`, answering the page envelope. */
export const pagedInput = z.object({ ...workItemFilter, ...pageInput });

export const notesInput = zOptionalText(2000);

export const completeInput = z.object({
  workItemId: zId,
  outcome: z.enum(WORK_ITEM_OUTCOMES),
  notes: notesInput,
});
