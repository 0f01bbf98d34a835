import type { EntityManager, InferEntity } from '@mikro-orm/postgresql';
import type { StoredFile } from '../../platform/storage.js';
import { audit } from '../../entities/audit.entity.js';
import { Evidence } from '../../entities/evidence.entity.js';
import { notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';

export type EvidenceRow = InferEntity<typeof Evidence>;

/** An evidence file opened for download: the route streams it with these headers. */
export interface EvidenceDownload {
  file: StoredFile;
  /** Strong validator: an evidence's bytes never change. */
  etag: string;
  mimeType: string;
  fileName: string;
}

export async function findEvidence(em: EntityManager, evidenceId: string, where: { territoryId?: string } = {}) {
  const evidence = await em.findOne(Evidence, { id: evidenceId, ...where });
  if (!evidence) throw notFound('Evidence');
  return evidence;
}

/** The download's file name: our id and the sniffed extension, never the client's name (no header injection). */
function downloadName(evidence: EvidenceRow) {
  const ext = /\.([a-z0-9]{1,10})$/i.exec(evidence.storageKey)?.[1];
  return ext ? `${evidence.id}.${ext}` : evidence.id;
}

/**
 * Opens an evidence file for streaming through the API (documents are never exposed by URL) and records who read
 * it. Shared by the admin and the territory-scoped downloads; the caller has already checked access. With
 * `territoryId`, evidence of another territory is a 404, as if it did not exist.
 */
export async function openEvidence(ctx: ServiceContext, input: { evidenceId: string; territoryId?: string }): Promise<EvidenceDownload> {
  const { em, user, storage } = ctx;
  const evidence = await findEvidence(em, input.evidenceId, input.territoryId ? { territoryId: input.territoryId } : {});
  const file = await storage.open(evidence.storageKey);
  if (!file) throw notFound('Evidence file');
  audit(em, {
    actorUserId: user.id,
    action: 'evidence.downloaded',
    subjectType: 'Evidence',
    subjectId: evidence.id,
    territoryId: evidence.territoryId ?? null,
    data: { kind: evidence.kind },
  });
  await em.flush();
  return { file, etag: `"${evidence.id}"`, mimeType: evidence.mimeType, fileName: downloadName(evidence) };
}
