/**
 * Territory capabilities (CURATOR, MODERATOR) live on the membership, so memberships writes them; the access domain
 * decides who may grant them and calls these.
 */
import { type EntityManager, type InferEntity, LockMode, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { type TerritoryCapability, TerritoryMembership } from '../../entities/membership.entity.js';
import { newId } from '../../platform/ids.js';

type MembershipRow = InferEntity<typeof TerritoryMembership>;

interface CapabilityWrite {
  territoryId: string;
  userId: string;
  capability: TerritoryCapability;
  actorUserId: string;
}

const capabilityAudit = (em: EntityManager, m: MembershipRow, action: string, write: CapabilityWrite) =>
  audit(em, {
    actorUserId: write.actorUserId,
    action,
    subjectType: 'TerritoryMembership',
    subjectId: m.id,
    territoryId: m.territoryId,
    data: { userId: m.userId, capability: write.capability },
  });

/** Adds the capability, creating a VISITOR membership when there is none; audited when something changed. */
export async function addCapability(em: EntityManager, write: CapabilityWrite): Promise<MembershipRow> {
  const { territoryId, userId, capability } = write;
  const apply = () =>
    em.transactional(async (tx) => {
      let membership = await tx.findOne(TerritoryMembership, { territoryId, userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (membership?.capabilities.includes(capability)) return membership;
      if (membership) membership.capabilities = [...membership.capabilities, capability];
      else membership = tx.create(TerritoryMembership, { id: newId(), territoryId, userId, role: 'VISITOR', capabilities: [capability] });
      capabilityAudit(tx, membership, 'capability.granted', write);
      return membership;
    });
  try {
    return await apply();
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    // A concurrent request created the membership first; the retry finds and updates it.
    em.clear();
    return apply();
  }
}

/** Removes the capability when held; the membership itself stays. */
export async function removeCapability(em: EntityManager, write: CapabilityWrite): Promise<void> {
  const { territoryId, userId, capability } = write;
  await em.transactional(async (tx) => {
    const membership = await tx.findOne(TerritoryMembership, { territoryId, userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!membership?.capabilities.includes(capability)) return;
    membership.capabilities = membership.capabilities.filter((c) => c !== capability);
    capabilityAudit(tx, membership, 'capability.revoked', write);
  });
}
