import type { EntityManager, InferEntity } from '@mikro-orm/postgresql';
import { AuditEntry } from '../../entities/audit.entity.js';
import { residencyVerificationOf, TerritoryMembership } from '../../entities/membership.entity.js';
import { Territory } from '../../entities/territory.entity.js';
import { clock } from '../../platform/clock.js';
import { haversineKm } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { badRequest, forbidden, notFound } from '../../platform/problems.js';
import type { MembershipOutput } from './memberships.schemas.js';
import { lockResidencySubject } from './residency-decision.js';

type MembershipRow = InferEntity<typeof TerritoryMembership>;

export function toMembershipOutput(m: MembershipRow): MembershipOutput {
  return {
    id: m.id,
    territoryId: m.territoryId,
    userId: m.userId,
    role: m.role,
    residencyVerification: residencyVerificationOf(m),
    capabilities: m.capabilities ?? [],
    createdAtUtc: m.createdAtUtc.toISOString(),
  };
}

/** The territory, when it exists and is ACTIVE (members join active territories only); else 404. */
export async function activeTerritory(em: EntityManager, territoryId: string) {
  const territory = await em.findOne(Territory, { id: territoryId });
  if (!territory || territory.status !== 'ACTIVE') throw notFound('Territory');
  return territory;
}

/** Creates the VISITOR membership, or returns the one the user already holds (whatever its role). */
export async function enter(em: EntityManager, userId: string, territoryId: string): Promise<MembershipOutput> {
  await activeTerritory(em, territoryId);
  // Concurrent enters (or a concurrent approval) must not collide on the (territory, user) unique key.
  await em.execute(
    `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, capabilities)
     values (?, ?, ?, ?, 'VISITOR', '{}') on conflict (territory_id, user_id) do nothing`,
    [newId(), clock.now(), territoryId, userId],
  );
  const membership = await em.findOneOrFail(TerritoryMembership, { territoryId, userId });
  return toMembershipOutput(membership);
}

export async function getMine(em: EntityManager, userId: string, territoryId: string): Promise<MembershipOutput> {
  const membership = await em.findOne(TerritoryMembership, { territoryId, userId });
  if (!membership) throw notFound('Membership');
  return toMembershipOutput(membership);
}

export async function listMine(em: EntityManager, userId: string): Promise<MembershipOutput[]> {
  const rows = await em.find(TerritoryMembership, { userId }, { orderBy: { createdAtUtc: 'asc', id: 'asc' } });
  return rows.map(toMembershipOutput);
}

export const NOT_RESIDENT_DETAIL = 'Only a RESIDENT of this territory can verify residency.';

/** The caller's RESIDENT membership of the territory; anyone else (visitor, no membership) is refused with 403. */
export async function requireResident(em: EntityManager, userId: string, territoryId: string) {
  const territory = await em.findOne(Territory, { id: territoryId });
  if (!territory) throw notFound('Territory');
  const membership = await em.findOne(TerritoryMembership, { territoryId, userId });
  if (membership?.role !== 'RESIDENT') throw forbidden(NOT_RESIDENT_DETAIL, 'NOT_RESIDENT');
  return { territory, membership };
}

/**
 * Geolocation check: inside the territory's radius (haversine from its centre) the membership becomes
 * GEOVERIFIED; outside, a 400 stating the distance and the allowed radius. The membership row is locked like
 * every other residency writer (document submission, decisions, transfer approval) and its role read again
 * under the lock: a transfer approved meanwhile has made it VISITOR, which must not get a verification.
 */
export async function verifyByGeolocation(
  em: EntityManager,
  userId: string,
  input: { territoryId: string; latitude: number; longitude: number },
): Promise<MembershipOutput> {
  const { territory, membership: unlocked } = await requireResident(em, userId, input.territoryId);
  const distanceKm = haversineKm(territory.latitude, territory.longitude, input.latitude, input.longitude);
  if (distanceKm > territory.radiusKm) {
    throw badRequest(
      `The coordinates are ${distanceKm.toFixed(2)} km from the territory centre; the allowed radius is ${territory.radiusKm} km.`,
      'OUTSIDE_TERRITORY_RADIUS',
    );
  }
  return em.transactional(async (tx) => {
    const membership = await lockResidencySubject(tx, unlocked.id);
    if (membership?.role !== 'RESIDENT') throw forbidden(NOT_RESIDENT_DETAIL, 'NOT_RESIDENT');
    membership.geoVerifiedAtUtc = clock.now();
    tx.create(AuditEntry, {
      actorUserId: userId,
      action: 'membership.geoVerified',
      subjectType: 'TerritoryMembership',
      subjectId: membership.id,
      territoryId: territory.id,
      data: { distanceKm: Number(distanceKm.toFixed(3)), radiusKm: territory.radiusKm },
    });
    await tx.flush();
    return toMembershipOutput(membership);
  });
}
