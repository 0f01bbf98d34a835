import type { ServiceContext } from '../../platform/service-context.js';
import { audit } from '../../entities/audit.entity.js';
import { Evidence } from '../../entities/evidence.entity.js';
import { User } from '../../entities/user.entity.js';
import { WorkItem } from '../../entities/work-item.entity.js';
import { forgetCachedUser } from '../../policy/caller.js';
import type { Upload } from '../../platform/upload.js';
import { newId } from '../../platform/ids.js';
import { conflict, notFound } from '../../platform/problems.js';
import { assertStorageQuota, reserveStorage } from '../media/storage-quota.js';
import { completeWorkItem, createWorkItem, findWorkItem } from '../work-items/work-items.service.js';
import { lockIdentitySubject } from './identity-decision.js';
import type { IdentitySubmissionOutput } from './verification.schemas.js';

const alreadyVerified = () => conflict('Your identity is already verified.', 'IDENTITY_ALREADY_VERIFIED');

/**
 * Stores an identity document and opens the admin's IDENTITY_VERIFICATION work item; the user becomes Pending.
 * A document sent while an earlier one is still pending supersedes it: the old item is CANCELLED (its evidence
 * is kept) and a new one is opened, so the queue never holds two items for one user. The document counts towards
 * the user's storage quota. The bytes are stored before the transaction and removed again when it fails.
 */
export async function submitIdentityDocument(ctx: ServiceContext, input: { upload: Upload }): Promise<IdentitySubmissionOutput> {
  const { em, storage } = ctx;
  const userId = ctx.user.id;
  const { upload } = input;
  const current = await em.findOne(User, { id: userId });
  if (!current) throw notFound('User');
  if (current.identityVerificationStatus === 'Verified') throw alreadyVerified();

  await assertStorageQuota(em, userId, upload.sizeBytes);

  const evidenceId = newId();
  const storageKey = `evidence/${userId}/${evidenceId}.${upload.ext}`;
  await storage.putFile(storageKey, upload.path);
  try {
    const workItemId = await em.transactional(async (tx) => {
      // The user row is locked first (as the decision does), so concurrent uploads and decisions serialize.
      const user = await lockIdentitySubject(tx, userId);
      if (!user) throw notFound('User');
      if (user.identityVerificationStatus === 'Verified') throw alreadyVerified();
      await reserveStorage(tx, userId, upload.sizeBytes);
      const now = new Date();
      await tx.nativeUpdate(
        WorkItem,
        { type: 'IDENTITY_VERIFICATION', subjectId: userId, status: 'PENDING' },
        { status: 'CANCELLED', completedAtUtc: now, notes: 'Superseded by a newer identity document.' },
      );
      tx.create(Evidence, {
        id: evidenceId,
        userId,
        territoryId: null,
        kind: 'IDENTITY_DOCUMENT',
        storageKey,
        mimeType: upload.mimeType,
        sizeBytes: upload.sizeBytes,
        originalFileName: upload.fileName,
      });
      const item = createWorkItem(tx, {
        type: 'IDENTITY_VERIFICATION',
        subjectType: 'User',
        subjectId: userId,
        payload: { evidenceId },
        requiredPermission: 'SYSTEM_ADMIN',
        createdByUserId: userId,
      });
      user.identityVerificationStatus = 'Pending';
      audit(tx, {
        actorUserId: userId,
        action: 'identity.document_submitted',
        subjectType: 'User',
        subjectId: userId,
        data: { evidenceId, workItemId: item.id, mimeType: upload.mimeType, sizeBytes: upload.sizeBytes },
      });
      await tx.flush();
      return item.id;
    });
    forgetCachedUser(userId);
    return { evidenceId, workItemId, status: 'Pending' };
  } catch (error) {
    await storage.remove(storageKey).catch(() => undefined);
    throw error;
  }
}

/** The admin's decision on an identity item: Verified or Rejected. Another type or an unknown id: 404. */
export async function decideIdentity(ctx: ServiceContext, input: { workItemId: string; outcome: 'APPROVED' | 'REJECTED'; notes: string | null }) {
  const { em } = ctx;
  const { workItemId, outcome, notes } = input;
  const actorUserId = ctx.user.id;
  const item = await findWorkItem(em, workItemId, { type: 'IDENTITY_VERIFICATION' });
  return completeWorkItem(em, item, outcome, notes, actorUserId);
}
