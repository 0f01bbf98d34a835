import type { EntityManager, InferEntity } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { Evidence } from '../../entities/evidence.entity.js';
import { TerritoryMembership } from '../../entities/membership.entity.js';
import { newId } from '../../platform/ids.js';
import { badRequest, forbidden, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import type { Upload } from '../../platform/upload.js';
import { assertStorageQuota, reserveStorage } from '../media/storage-quota.js';
import { cancelPendingWorkItems, createWorkItem, findPendingWorkItem } from '../work-items/work-items.service.js';
import { NOT_RESIDENT_DETAIL, requireResident } from './memberships.service.js';
import type { ResidencyDocumentOutput } from './memberships.schemas.js';
import { lockResidencySubject } from './residency-decision.js';

/** Residency documents: bills, contracts, declarations; photos or scans, sniffed from the bytes. */
export const RESIDENCY_DOCUMENT_MIME_TYPES = ['image/jpeg', 'image/png', 'application/pdf'] as const;
export const RESIDENCY_DOCUMENT_MAX_BYTES = 5 * 1024 * 1024;

type MembershipRow = InferEntity<typeof TerritoryMembership>;

/** Inside the caller's transaction: the membership locked, and still RESIDENT (it may have changed meanwhile). */
async function lockedResidentMembership(tx: EntityManager, membershipId: string) {
  const membership = await lockResidencySubject(tx, membershipId);
  if (membership?.role !== 'RESIDENT') throw forbidden(NOT_RESIDENT_DETAIL, 'NOT_RESIDENT');
  return membership;
}

/**
 * Opens the curators' RESIDENCY_VERIFICATION item for a membership. A document sent while an earlier one is
 * still pending supersedes it (the old item is CANCELLED, its evidence kept): one open item per membership.
 */
function openWorkItem(tx: EntityManager, membership: MembershipRow, evidenceId: string, userId: string) {
  const item = createWorkItem(tx, {
    type: 'RESIDENCY_VERIFICATION',
    subjectType: 'TerritoryMembership',
    subjectId: membership.id,
    territoryId: membership.territoryId,
    payload: { evidenceId, userId },
    requiredCapability: 'CURATOR',
    createdByUserId: userId,
  });
  audit(tx, {
    actorUserId: userId,
    action: 'residency.document_submitted',
    subjectType: 'TerritoryMembership',
    subjectId: membership.id,
    territoryId: membership.territoryId,
    data: { evidenceId, workItemId: item.id },
  });
  return item;
}

const supersedePending = (tx: EntityManager, membershipId: string, at: Date) =>
  cancelPendingWorkItems(tx, { type: 'RESIDENCY_VERIFICATION', subjectIds: [membershipId], notes: 'Superseded by a newer residency document.', at });

/**
 * Stores an uploaded residency document as Evidence of the territory and opens the work item. The document counts
 * towards the user's storage quota. The bytes are stored before the transaction and removed again when it fails.
 */
export async function submitUploadedDocument(ctx: ServiceContext, input: { territoryId: string; upload: Upload }): Promise<ResidencyDocumentOutput> {
  const { membership } = await requireResident(ctx, input.territoryId);
  const { em, storage } = ctx;
  const { territoryId, upload } = input;
  const userId = ctx.user.id;
  await assertStorageQuota(em, userId, upload.sizeBytes);
  const evidenceId = newId();
  const storageKey = `evidence/${userId}/${evidenceId}.${upload.ext}`;
  await storage.putFile(storageKey, upload.path);
  try {
    const workItemId = await em.transactional(async (tx) => {
      const locked = await lockedResidentMembership(tx, membership!.id);
      await reserveStorage(tx, userId, upload.sizeBytes);
      await supersedePending(tx, locked.id, ctx.clock.now());
      tx.create(Evidence, {
        id: evidenceId,
        userId,
        territoryId,
        kind: 'RESIDENCY_DOCUMENT',
        storageKey,
        mimeType: upload.mimeType,
        sizeBytes: upload.sizeBytes,
        originalFileName: upload.fileName,
      });
      const item = openWorkItem(tx, locked, evidenceId, userId);
      await tx.flush();
      return item.id;
    });
    return { evidenceId, workItemId, status: 'PENDING' };
  } catch (error) {
    await storage.remove(storageKey).catch(() => undefined);
    throw error;
  }
}

/**
 * Opens the work item for a residency document the caller uploaded earlier (someone else's evidence: 404).
 * Sending the evidence of the item already pending returns that item (`created: false`).
 */
export async function submitExistingEvidence(ctx: ServiceContext, input: { territoryId: string; evidenceId: string }) {
  const { membership } = await requireResident(ctx, input.territoryId);
  const { territoryId, evidenceId } = input;
  const userId = ctx.user.id;
  return ctx.em.transactional(async (tx) => {
    const locked = await lockedResidentMembership(tx, membership!.id);
    const evidence = await tx.findOne(Evidence, { id: evidenceId, userId });
    if (!evidence) throw notFound('Evidence');
    if (evidence.kind !== 'RESIDENCY_DOCUMENT') throw badRequest('The evidence is not a residency document.', 'WRONG_EVIDENCE_KIND');
    if (evidence.territoryId && evidence.territoryId !== territoryId) {
      throw badRequest('The evidence was sent for another territory.', 'WRONG_EVIDENCE_TERRITORY');
    }
    const pending = await findPendingWorkItem(tx, { type: 'RESIDENCY_VERIFICATION', subjectType: 'TerritoryMembership', subjectId: locked.id });
    if (pending && pending.payload?.evidenceId === evidenceId) {
      return { created: false, result: { evidenceId, workItemId: pending.id, status: pending.status } satisfies ResidencyDocumentOutput };
    }
    await supersedePending(tx, locked.id, ctx.clock.now());
    // The territory's curators download it through the territory-scoped route, which requires this link.
    evidence.territoryId = territoryId;
    const item = openWorkItem(tx, locked, evidenceId, userId);
    await tx.flush();
    return { created: true, result: { evidenceId, workItemId: item.id, status: 'PENDING' } satisfies ResidencyDocumentOutput };
  });
}
