import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const EVIDENCE_KINDS = ['IDENTITY_DOCUMENT', 'RESIDENCY_DOCUMENT'] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/** An uploaded document backing a verification; the bytes live in storage under `storageKey`. */
export const Evidence = defineEntity({
  name: 'Evidence',
  tableName: 'evidence',
  triggers: [refuseDeletedAccountTrigger('evidence', 'user_id')],
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').index(),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').nullable().deleteRule('cascade'),
    kind: p.string().length(40).$type<EvidenceKind>(),
    storageKey: p.string().length(500),
    mimeType: p.string().length(100),
    sizeBytes: p.integer(),
    originalFileName: p.string().length(255).nullable(),
  },
});
