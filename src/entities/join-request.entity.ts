import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const JOIN_REQUEST_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'CANCELLED'] as const;
export type JoinRequestStatus = (typeof JOIN_REQUEST_STATUSES)[number];

/**
 * A request to become RESIDENT of a territory. Rows are never deleted: the per-(user, territory) creation limit
 * counts them, cancelled ones included.
 */
export const JoinRequest = defineEntity({
  name: 'JoinRequest',
  tableName: 'join_request',
  triggers: [refuseDeletedAccountTrigger('join_request', 'requester_user_id')],
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    requesterUserId: () => p.manyToOne(User).mapToPk().fieldName('requester_user_id').deleteRule('cascade'),
    message: p.string().length(2000).nullable(),
    status: p.string().length(20).$type<JoinRequestStatus>().default('PENDING'),
    /** Made by transfer-residency: approval also demotes the requester's RESIDENT membership elsewhere. */
    isTransfer: p.boolean().default(false),
    decidedAtUtc: p.datetime().nullable(),
    decidedByUserId: p.uuid().nullable(),
  },
  indexes: [{ properties: ['requesterUserId', 'territoryId', 'createdAtUtc'] }, { properties: ['territoryId', 'status', 'createdAtUtc'] }],
  // At most one PENDING request per user and territory: the backstop of the idempotent create.
  uniques: [{ name: 'join_request_one_pending_uniq', properties: ['territoryId', 'requesterUserId'], where: "status = 'PENDING'" }],
});

/** Who a join request is addressed to; indexed by recipient for the incoming list. */
export const JoinRequestRecipient = defineEntity({
  name: 'JoinRequestRecipient',
  tableName: 'join_request_recipient',
  properties: {
    joinRequestId: () => p.manyToOne(JoinRequest).mapToPk().fieldName('join_request_id').deleteRule('cascade').primary(),
    recipientUserId: () => p.manyToOne(User).mapToPk().fieldName('recipient_user_id').deleteRule('cascade').primary(),
  },
  indexes: [{ properties: ['recipientUserId', 'joinRequestId'] }],
});
