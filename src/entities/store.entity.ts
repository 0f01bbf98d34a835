import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const STORE_STATUSES = ['ACTIVE', 'PAUSED'] as const;
export type StoreStatus = (typeof STORE_STATUSES)[number];
/** Spelled as the spec uses them (`Public`); inputs accept any case. */
export const CONTACT_VISIBILITIES = ['Public', 'Private'] as const;
export type ContactVisibility = (typeof CONTACT_VISIBILITIES)[number];

/**
 * A seller's store in a territory (DESIGN section 13). One per owner and territory (unique), so the repeat POST that
 * updates it is race-safe. Stores are not territory assets (rule 5): nothing here refers to one.
 */
export const Store = defineEntity({
  name: 'Store',
  tableName: 'store',
  triggers: [refuseDeletedAccountTrigger('store', 'owner_user_id')],
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    ownerUserId: () => p.manyToOne(User).mapToPk().fieldName('owner_user_id').deleteRule('cascade').index(),
    displayName: p.string().length(200),
    description: p.string().length(2000).nullable(),
    contactVisibility: p.string().length(20).$type<ContactVisibility>(),
    contactPhone: p.string().length(50).nullable(),
    contactEmail: p.string().length(320).nullable(),
    status: p.string().length(20).$type<StoreStatus>().default('ACTIVE'),
    paymentsEnabled: p.boolean().default(true),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ name: 'store_territory_owner_unique', properties: ['territoryId', 'ownerUserId'] }],
  indexes: [
    // The store list: a territory's ACTIVE stores by name.
    {
      name: 'store_active_territory_idx',
      expression: `create index "store_active_territory_idx" on "store" ("territory_id", "display_name", "id") where status = 'ACTIVE'`,
    },
  ],
});
