import type { InferEntity } from '@mikro-orm/postgresql';
import { execSql, isoValue, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { residencyVerificationOf, TerritoryMembership } from '../../entities/membership.entity.js';
import { haversineKm } from '../../platform/geo.js';
import { newId } from '../../platform/ids.js';
import { badRequest, forbidden, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { type MembershipFacts, membershipsOfQuery } from './memberships.queries.js';
import type { MembershipOutput } from './memberships.schemas.js';
import { lockResidencySubject } from './residency-decision.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

type MembershipRow = InferEntity<typeof TerritoryMembership>;

export function toMembershipOutput(m: MembershipRow | MembershipFacts): MembershipOutput {
  return {
    id: m.id,
    territoryId: m.territoryId,
    userId: m.userId,
    role: m.role,
    residencyVerification: residencyVerificationOf(m),
    capabilities: m.capabilities ?? [],
    createdAtUtc: isoValue(m.createdAtUtc)!,
  };
}

/** Creates the VISITOR membership in an ACTIVE territory, or returns the one the user already holds (whatever its role). */
export async function enter(ctx: ServiceContext, input: { territoryId: string }): Promise<MembershipOutput> {
  const { territoryId } = await requireTerritory(ctx, input.territoryId);
  const { em, user } = ctx;
  const userId = user.id;
  // Concurrent enters (or a concurrent approval) must not collide on the (territory, user) unique key.
  await execSql(
    em,
    `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, capabilities)
     values (?, ?, ?, ?, 'VISITOR', '{}') on conflict (territory_id, user_id) do nothing`,
    [newId(), ctx.clock.now(), territoryId, userId],
  );
  const membership = await em.findOneOrFail(TerritoryMembership, { territoryId, userId });
  return toMembershipOutput(membership);
}

// The caller's memberships are read on every app start: given the context, on the pool, the manager left unforked.
export async function getMine(ctx: ServiceContext, input: { territoryId: string }): Promise<MembershipOutput> {
  const [membership] = await runHotRead<MembershipFacts>(ctx, membershipsOfQuery(ctx.user.id, input.territoryId), { prepared: true });
  if (!membership) throw notFound('Membership');
  return toMembershipOutput(membership);
}

export async function listMine(ctx: ServiceContext): Promise<MembershipOutput[]> {
  return (await runHotRead<MembershipFacts>(ctx, membershipsOfQuery(ctx.user.id), { prepared: true })).map(toMembershipOutput);
}

export const NOT_RESIDENT_DETAIL = 'Only a RESIDENT of this territory can verify residency.';

/** The caller is RESIDENT of the territory (whatever its status); anyone else (visitor, no membership) is refused with 403. */
export const requireResident = (ctx: ServiceContext, territoryId: string) =>
  requireTerritory(ctx, territoryId, { as: 'resident', status: 'VISIBLE', denied: { message: NOT_RESIDENT_DETAIL, code: 'NOT_RESIDENT' } });

/**
 * Geolocation check: inside the territory's radius (haversine from its centre) the membership becomes
 * GEOVERIFIED; outside, a 400 stating the distance and the allowed radius. The membership row is locked like
 * every other residency writer (document submission, decisions, transfer approval) and its role read again
 * under the lock: a transfer approved meanwhile has made it VISITOR, which must not get a verification.
 */
export async function verifyByGeolocation(ctx: ServiceContext, input: { territoryId: string; latitude: number; longitude: number }): Promise<MembershipOutput> {
  const { territory, membership: unlocked } = await requireResident(ctx, input.territoryId);
  const { em } = ctx;
  const userId = ctx.user.id;
  const distanceKm = haversineKm(territory.latitude, territory.longitude, input.latitude, input.longitude);
  if (distanceKm > territory.radiusKm) {
    throw badRequest(
      `The coordinates are ${distanceKm.toFixed(2)} km from the territory centre; the allowed radius is ${territory.radiusKm} km.`,
      'OUTSIDE_TERRITORY_RADIUS',
    );
  }
  return em.transactional(async (tx) => {
    const membership = await lockResidencySubject(tx, unlocked!.id);
    if (membership?.role !== 'RESIDENT') throw forbidden(NOT_RESIDENT_DETAIL, 'NOT_RESIDENT');
    membership.geoVerifiedAtUtc = ctx.clock.now();
    audit(tx, {
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

/** Account deletion: the user leaves every territory (memberships carry residency and capabilities). */
export const eraseMemberships: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from territory_membership where user_id = ?', [userId]);
};
