import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, textArray, refuseDeletedAccountTrigger } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const MEMBERSHIP_ROLES = ['VISITOR', 'RESIDENT'] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];
export const RESIDENCY_VERIFICATIONS = ['NONE', 'GEOVERIFIED', 'DOCUMENTVERIFIED'] as const;
export type ResidencyVerification = (typeof RESIDENCY_VERIFICATIONS)[number];
export const TERRITORY_CAPABILITIES = ['CURATOR', 'MODERATOR'] as const;
export type TerritoryCapability = (typeof TERRITORY_CAPABILITIES)[number];

export const TerritoryMembership = defineEntity({
  name: 'TerritoryMembership',
  tableName: 'territory_membership',
  triggers: [refuseDeletedAccountTrigger('territory_membership', 'user_id')],
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').index(),
    role: p.string().length(20).$type<MembershipRole>(),
    geoVerifiedAtUtc: p.datetime().nullable(),
    documentVerifiedAtUtc: p.datetime().nullable(),
    capabilities: textArray().$type<TerritoryCapability[]>().default([]),
  },
  uniques: [{ properties: ['territoryId', 'userId'] }],
});

/** The strongest verification held: DOCUMENTVERIFIED over GEOVERIFIED over NONE. */
export function residencyVerificationOf(m: { documentVerifiedAtUtc?: Date | string | null; geoVerifiedAtUtc?: Date | string | null }): ResidencyVerification {
  if (m.documentVerifiedAtUtc) return 'DOCUMENTVERIFIED';
  if (m.geoVerifiedAtUtc) return 'GEOVERIFIED';
  return 'NONE';
}
