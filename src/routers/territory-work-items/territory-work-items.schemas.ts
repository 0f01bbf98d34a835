import { z } from 'zod';
import { zId } from '../../platform/ids.js';
import { completeInput, listInput, notesInput, pagedInput } from '../work-items/work-items.schemas.js';

/** The territory's queue: the admin queue's filters and `skip`/`take`, scoped by the path's territory. */
export const territoryListInput = listInput.extend({ territoryId: zId });

/** The territory's queue, `/paged`: the admin queue's filters and paging, scoped by the path's territory. */
export const territoryPagedInput = pagedInput.extend({ territoryId: zId });

export const territoryCompleteInput = completeInput.extend({ territoryId: zId });

export const residencyDecisionInput = z.object({
  territoryId: zId,
  workItemId: zId,
  outcome: z.enum(['APPROVED', 'REJECTED']),
  notes: notesInput,
});
