import { z } from 'zod';
import { JOIN_REQUEST_STATUSES } from '../../entities/join-request.entity.js';
import { lenientEnum } from '../../platform/enums.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { becomeResidentInput } from '../memberships/memberships.schemas.js';

export const joinRequestOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    requesterUserId: z.uuid(),
    recipientUserIds: z.array(z.uuid()),
    message: z.string().nullable(),
    status: z.enum(JOIN_REQUEST_STATUSES),
    createdAtUtc: z.iso.datetime(),
    decidedAtUtc: z.iso.datetime().nullable(),
    decidedByUserId: z.uuid().nullable(),
  })
  .meta({ id: 'JoinRequest' });
export type JoinRequestOutput = z.infer<typeof joinRequestOutput>;

export const joinRequestPage = pagedOutput(joinRequestOutput).meta({ id: 'JoinRequestPage' });

/**
 * The same body as become-resident: recipients are optional (absent, null or empty), at most 3. Both routes create
 * the request through `createJoinRequest`, whose `resolveRecipients` addresses the eligible named recipients, else
 * the territory's curators, else the system admins (spec, JoinRequest state table), so none named is a valid request.
 */
export const createJoinRequestInput = becomeResidentInput;

const statusFilter = { status: lenientEnum(JOIN_REQUEST_STATUSES).optional() };
export const incomingInput = z.object({ ...statusFilter, ...skipTakeInput() });
export const incomingPagedInput = z.object({ ...statusFilter, ...pageInput });

export const joinRequestIdInput = z.object({ id: zId });
