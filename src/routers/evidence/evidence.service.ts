import type { EntityManager, InferEntity } from '@mikro-orm/postgresql';
import type { FastifyReply } from 'fastify';
import { AuditEntry } from '../../entities/audit.entity.js';
import { Evidence } from '../../entities/evidence.entity.js';
import { notFound } from '../../platform/problems.js';
import type { Storage } from '../../platform/storage.js';

export type EvidenceRow = InferEntity<typeof Evidence>;

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
 * Streams an evidence file through the API (documents are never exposed by URL) and records who read it.
 * Shared by the admin and the territory-scoped downloads; the caller has already checked access.
 */
export async function sendEvidence(em: EntityManager, storage: Storage, reply: FastifyReply, evidence: EvidenceRow, actorUserId: string) {
  const file = await storage.open(evidence.storageKey);
  if (!file) throw notFound('Evidence file');
  em.create(AuditEntry, {
    actorUserId,
    action: 'evidence.downloaded',
    subjectType: 'Evidence',
    subjectId: evidence.id,
    territoryId: evidence.territoryId ?? null,
    data: { kind: evidence.kind },
  });
  try {
    await em.flush();
  } catch (error) {
    file.stream.destroy();
    throw error;
  }
  return reply
    .status(200)
    .header('Content-Type', evidence.mimeType)
    .header('Content-Length', String(file.sizeBytes))
    .header('Content-Disposition', `attachment; filename="${downloadName(evidence)}"`)
    .header('Cache-Control', 'private, no-store')
    .send(file.stream);
}
