import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppConfig } from '../../config.js';
import { Item } from '../../entities/item.entity.js';
import { TerritoryMembership } from '../../entities/membership.entity.js';
import { Store } from '../../entities/store.entity.js';
import { Territory } from '../../entities/territory.entity.js';
import { User, UserPermission } from '../../entities/user.entity.js';

const TERRITORIES = [
  {
    name: 'Vila Madalena',
    city: 'São Paulo',
    state: 'SP',
    latitude: -23.5535,
    longitude: -46.6915,
    tags: ['arts', 'nightlife'],
    flags: ['ALERTPOSTS', 'MARKETPLACEENABLED', 'MEDIAIMAGESENABLED', 'CHATENABLED', 'CHATTERITORYPUBLICCHANNEL'],
  },
  {
    name: 'Pinheiros',
    city: 'São Paulo',
    state: 'SP',
    latitude: -23.567,
    longitude: -46.702,
    tags: ['food', 'commerce'],
    flags: ['MARKETPLACEENABLED', 'MEDIAIMAGESENABLED'],
  },
  {
    name: 'Santa Teresa',
    city: 'Rio de Janeiro',
    state: 'RJ',
    latitude: -22.9186,
    longitude: -43.1886,
    tags: ['heritage', 'hills'],
    flags: ['ALERTPOSTS', 'MEDIAIMAGESENABLED', 'MEDIAVIDEOSENABLED'],
  },
  {
    name: 'Lagoa da Conceição',
    city: 'Florianópolis',
    state: 'SC',
    latitude: -27.6011,
    longitude: -48.4697,
    tags: ['lagoon', 'nature'],
    flags: ['ALERTPOSTS', 'MEDIAIMAGESENABLED', 'MEDIAAUDIOENABLED'],
  },
  {
    name: 'Chapada dos Veadeiros',
    city: 'Alto Paraíso de Goiás',
    state: 'GO',
    latitude: -14.1333,
    longitude: -47.5167,
    tags: ['waterfalls', 'springs'],
    flags: ['ALERTPOSTS'],
  },
];

const USERS = [
  { externalId: 'admin', displayName: 'Demo Admin', email: 'admin@demo.local', admin: true },
  { externalId: 'resident', displayName: 'Demo Resident', email: 'resident@demo.local', admin: false },
  { externalId: 'visitor', displayName: 'Demo Visitor', email: 'visitor@demo.local', admin: false },
];

/** The demo resident's store in the first territory (MARKETPLACEENABLED); prices in cents. */
const STORE = { displayName: 'Madalena Crafts', description: 'Handmade ceramics and small repairs from the neighbourhood.' };
const ITEMS = [
  { type: 'PRODUCT', title: 'Ceramic mug', description: 'Glazed stoneware, 300 ml.', category: 'Ceramics', pricingType: 'FIXED', priceInCents: 4500 },
  { type: 'PRODUCT', title: 'Serving bowl', description: 'Hand-thrown, 25 cm.', category: 'Ceramics', pricingType: 'FIXED', priceInCents: 12000 },
  { type: 'SERVICE', title: 'Bicycle repair', description: 'Tune-up at your door.', category: 'Repairs', pricingType: 'NEGOTIABLE', priceInCents: null },
  { type: 'PRODUCT', title: 'Seedlings', description: 'Basil and mint from the garden.', category: 'Garden', pricingType: 'FREE', priceInCents: 0 },
] as const;

/**
 * Loads the demo data on the first start only (no territory yet): a few ACTIVE territories, three users of
 * provider `demo` (admin, resident of the first territory, visitor) and the resident's store there with a few
 * items. Log in as them with POST /api/v1/auth/social.
 */
export async function seedDemoData(em: EntityManager, _config: AppConfig) {
  if ((await em.count(Territory, {})) > 0) return;
  await em.transactional(async (tx) => {
    const territories = TERRITORIES.map((t) =>
      tx.create(Territory, { ...t, description: `${t.name}, ${t.city}`, radiusKm: 5, status: 'ACTIVE', enabledFlags: t.flags }),
    );
    for (const u of USERS) {
      const user = tx.create(User, { authProvider: 'demo', externalId: u.externalId, displayName: u.displayName, email: u.email });
      if (u.admin) tx.create(UserPermission, { userId: user.id, permission: 'SYSTEM_ADMIN' });
      const first = territories[0];
      if (first && u.externalId === 'resident') {
        // A verified resident (geo), as owning a store and listing items need (spec Marketplace).
        tx.create(TerritoryMembership, { territoryId: first.id, userId: user.id, role: 'RESIDENT', geoVerifiedAtUtc: new Date() });
        const store = tx.create(Store, { ...STORE, territoryId: first.id, ownerUserId: user.id, contactVisibility: 'Public', contactEmail: u.email });
        for (const item of ITEMS) {
          tx.create(Item, { ...item, territoryId: first.id, storeId: store.id, createdByUserId: user.id, currency: 'BRL', status: 'ACTIVE' });
        }
      }
      if (first && u.externalId === 'visitor') tx.create(TerritoryMembership, { territoryId: first.id, userId: user.id, role: 'VISITOR' });
    }
  });
}
