import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { User } from './user.entity.js';

/** A user hiding another user's content from themselves (feed, map, other lists). One row per pair. */
export const UserBlock = defineEntity({
  name: 'UserBlock',
  tableName: 'user_block',
  triggers: [refuseDeletedAccountTrigger('user_block', 'blocker_user_id')],
  properties: {
    ...baseProperties,
    blockerUserId: () => p.manyToOne(User).mapToPk().fieldName('blocker_user_id').deleteRule('cascade'),
    blockedUserId: () => p.manyToOne(User).mapToPk().fieldName('blocked_user_id').deleteRule('cascade').index(),
  },
  // Also the index of `blockedUserIdsOf` (leading column blocker).
  uniques: [{ properties: ['blockerUserId', 'blockedUserId'] }],
});
