import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Item } from './item.entity.js';
import { Store } from './store.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const INQUIRY_STATUSES = ['OPEN'] as const;
export type InquiryStatus = (typeof INQUIRY_STATUSES)[number];

/** A buyer's question about an item, addressed to its store's owner (spec: OPEN on creation; later states not shown). */
export const Inquiry = defineEntity({
  name: 'Inquiry',
  tableName: 'inquiry',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    itemId: () => p.manyToOne(Item).mapToPk().fieldName('item_id').deleteRule('cascade').index(),
    storeId: () => p.manyToOne(Store).mapToPk().fieldName('store_id').deleteRule('cascade'),
    fromUserId: () => p.manyToOne(User).mapToPk().fieldName('from_user_id').deleteRule('cascade'),
    message: p.string().length(2000),
    status: p.string().length(20).$type<InquiryStatus>().default('OPEN'),
  },
  indexes: [
    // Sent (`/inquiries/me`) and received (`/inquiries/received`), newest first.
    { name: 'inquiry_from_user_idx', expression: `create index "inquiry_from_user_idx" on "inquiry" ("from_user_id", "created_at_utc" desc, "id" desc)` },
    { name: 'inquiry_store_idx', expression: `create index "inquiry_store_idx" on "inquiry" ("store_id", "created_at_utc" desc, "id" desc)` },
  ],
});
