import { z } from 'zod';
import { MEMBERSHIP_ROLES, RESIDENCY_VERIFICATIONS, TERRITORY_CAPABILITIES } from '../../entities/membership.entity.js';
import { WORK_ITEM_STATUSES } from '../../entities/work-item.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { zOptionalText } from '../../platform/text.js';

export const membershipOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    userId: z.uuid(),
    role: z.enum(MEMBERSHIP_ROLES),
    /** The strongest held: DOCUMENTVERIFIED over GEOVERIFIED over NONE. */
    residencyVerification: z.enum(RESIDENCY_VERIFICATIONS),
    capabilities: z.array(z.enum(TERRITORY_CAPABILITIES)),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Membership' });
export type MembershipOutput = z.infer<typeof membershipOutput>;

export const territoryIdInput = z.object({ territoryId: zId });

/** Join-request body shared by become-resident, join-requests and transfer-residency. */
export const recipientUserIds = z.array(zId).max(3, 'at most 3 recipients');
export const joinMessage = zOptionalText(2000);

export const becomeResidentInput = z.object({
  territoryId: zId,
  recipientUserIds: recipientUserIds.nullish(),
  message: joinMessage,
});

export const transferResidencyInput = z.object({
  toTerritoryId: zId,
  recipientUserIds: recipientUserIds.nullish(),
  message: joinMessage,
});

export const geoVerificationInput = z.object({
  territoryId: zId,
  latitude: zLatitude,
  longitude: zLongitude,
});

export const documentVerificationInput = z.object({
  territoryId: zId,
  evidenceId: zId,
});

/** Answer of a residency document submission: the stored evidence and the curators' work item. */
export const residencyDocumentOutput = z
  .object({
    evidenceId: z.uuid(),
    workItemId: z.uuid(),
    status: z.enum(WORK_ITEM_STATUSES),
  })
  .meta({ id: 'ResidencyDocumentSubmission' });
export type ResidencyDocumentOutput = z.infer<typeof residencyDocumentOutput>;
