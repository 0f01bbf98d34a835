import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import type { ItemType } from './item.entity.js';
import { Territory } from './territory.entity.js';

export const FEE_MODES = ['PERCENTAGE', 'FIXED'] as const;
export type FeeMode = (typeof FEE_MODES)[number];

/**
 * The platform fee of a territory for one item type (DESIGN section 13), upserted per (territory, item type).
 * PERCENTAGE carries `feeBasisPoints` (0..10000), FIXED `feeFixedInCents` per unit; the other is null.
 */
export const PlatformFeeConfig = defineEntity({
  name: 'PlatformFeeConfig',
  tableName: 'platform_fee_config',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    itemType: p.string().length(20).$type<ItemType>(),
    feeMode: p.string().length(20).$type<FeeMode>(),
    feeBasisPoints: p.integer().nullable(),
    feeFixedInCents: p.bigint('number').nullable(),
    isActive: p.boolean().default(true),
    updatedByUserId: p.uuid().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ name: 'platform_fee_config_territory_item_type_unique', properties: ['territoryId', 'itemType'] }],
});
