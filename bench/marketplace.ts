/**
 * The marketplace scenarios and their seed, listed in scenarios.ts:
 * - item search: `GET /api/v1/items?territoryId&q` on ~50k items of one territory against a bare route doing the
 *   same work with `pg` as src/routers/items/items.service.ts `listItems`: the territory access read, the list SQL of
 *   items.queries.ts (the trigram index on title and description), then the media URLs of the page;
 * - checkout: concurrent buyers each checking out a seeded 3-line cart (two stores: two checkouts per call) through
 *   `POST /api/v1/cart/checkout` with the `fake` gateway; reports checkouts per second and latency. A checkout
 *   consumes its cart, so it has no rotating request pairs and no baseline.
 */
import type pg from 'pg';
import { runOnPoolAs, runPreparedOnPool } from '../src/db/sql.js';
import { type TerritoryAccessRow, territoryAccessQuery } from '../src/policy/access.queries.js';
import { type ItemRow, listItemRows } from '../src/routers/items/items.queries.js';
import { itemOutputOf } from '../src/routers/items/items.service.js';
import { type LiveMediaRow, liveMediaWith, mediaUrlOfRow } from '../src/routers/media/media-attach.js';
import { driveEach } from './load.js';
import { HOT_READ, type CustomScenario, type Scenario } from './scenario.js';
import { type BenchSize, type SeedStep, benchViewerId } from './seed.js';

/** Catalogue words: titles are `<adjective> <product> <n>`, so searches for a word or a part of one find many items. */
const PRODUCTS = [
  'sourdough bread',
  'wildflower honey',
  'handmade soap',
  'ceramic mug',
  'knitted scarf',
  'organic coffee',
  'banana cake',
  'tomato seedlings',
  'leather wallet',
  'cashew nuts',
  'coconut candy',
  'cheese bread',
  'guitar lessons',
  'bike repair',
  'dog walking',
  'yoga class',
  'house cleaning',
  'english lessons',
];
/** The products from here on are services. */
const FIRST_SERVICE = PRODUCTS.indexOf('guitar lessons');
const ADJECTIVES = ['fresh', 'homemade', 'artisanal', 'local', 'vintage', 'organic', 'small', 'large', 'premium', 'classic'];
const CATEGORIES = ['food', 'crafts', 'home', 'garden', 'services'];
/** Words no item has: a search that finds nothing. */
const ABSENT = ['xylophone', 'snowboard', 'submarine'];
const TAKE = 20;

function marketplaceCounts(size: BenchSize) {
  return size.mode === 'full' ? { items: 50_000, stores: 250, buyers: 1_500 } : { items: 2_000, stores: 20, buyers: 120 };
}

/** The marketplace's territory: the second in the md5 order (the map takes the first, the feed the last). */
export async function marketplaceTerritoryId(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`select id from territory where status = 'ACTIVE' order by md5(id::text) offset 1 limit 1`);
  const id = rows[0]?.id;
  if (!id) throw new Error('the marketplace seed needs the territories step first');
  return id;
}

const sqlTextArray = (items: readonly string[]) => `array[${items.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]::text[]`;

/**
 * One territory with the marketplace on: stores (one in twenty PAUSED) owned by seeded sellers, ~50k items (smoke:
 * 2k), one a minute back from now, a twentieth ARCHIVED, FIXED prices; and the checkout buyers, each with a cart of
 * three lines: two items of one ACTIVE store and one of another. Runs after the territories step.
 */
export const marketplaceSeed: SeedStep = {
  name: 'marketplace',
  async run(db, size) {
    const counts = marketplaceCounts(size);
    const territoryId = await marketplaceTerritoryId(db);
    await db.query(`update territory set enabled_flags = array_append(enabled_flags, 'MARKETPLACEENABLED') where id = $1`, [territoryId]);
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Seller ' || i, 'bench', 'bench-seller-' || i, 'Unverified' from generate_series(1, $1::int) as i`,
      [counts.stores],
    );
    await db.query(
      `insert into store (id, created_at_utc, territory_id, owner_user_id, display_name, description, contact_visibility, contact_phone, contact_email,
                          status, payments_enabled, updated_at_utc)
       select gen_random_uuid(), now(), $1::uuid, u.id, 'Store of ' || u.display_name, null, 'Public', null, u.external_id || '@example.org',
              case when substr(u.external_id, 14)::int % 20 = 0 then 'PAUSED' else 'ACTIVE' end, true, now()
         from app_user u where u.external_id like 'bench-seller-%'`,
      [territoryId],
    );
    await db.query(
      `with stores as (select id, owner_user_id, row_number() over (order by id) - 1 as k from store where territory_id = $1::uuid)
       insert into item (id, created_at_utc, territory_id, store_id, created_by_user_id, type, title, description, category, tags, pricing_type,
                         price_in_cents, currency, unit, latitude, longitude, media_ids, status, archived_at_utc, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(secs => g.i * 60), $1::uuid, s.id, s.owner_user_id,
              case when g.p >= ${FIRST_SERVICE} then 'SERVICE' else 'PRODUCT' end,
              w.adjectives[1 + g.i % ${ADJECTIVES.length}] || ' ' || w.products[1 + g.p] || ' ' || g.i,
              case when g.i % 3 = 0 then 'Made in the neighbourhood, ask about ' || w.products[1 + (g.p + 5) % ${PRODUCTS.length}] end,
              w.categories[1 + g.i % ${CATEGORIES.length}], null, 'FIXED', 100 + (g.i * 37) % 20000, 'BRL', null, null, null, '{}',
              case when g.i % 20 = 0 then 'ARCHIVED' else 'ACTIVE' end, case when g.i % 20 = 0 then now() end, now()
         from (select i, (i * 7) % ${PRODUCTS.length} as p from generate_series(1, $2::int) as s(i)) g
         join stores s on s.k = g.i % (select count(*) from stores),
              (select ${sqlTextArray(PRODUCTS)} as products, ${sqlTextArray(ADJECTIVES)} as adjectives, ${sqlTextArray(CATEGORIES)} as categories) w`,
      [territoryId, counts.items],
    );
    // Buyers and their carts: the n-th buyer takes two items of the n-th buyable store and one of the next.
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Buyer ' || i, 'bench', 'bench-buyer-' || i, 'Unverified' from generate_series(1, $1::int) as i`,
      [counts.buyers],
    );
    await db.query(
      `insert into cart (id, created_at_utc, user_id, territory_id, updated_at_utc)
       select gen_random_uuid(), now(), id, $1::uuid, now() from app_user where external_id like 'bench-buyer-%'`,
      [territoryId],
    );
    await db.query(
      `with buyable as (
         select i.id, i.store_id, dense_rank() over (order by i.store_id) - 1 as store_k, row_number() over (partition by i.store_id order by i.id) as n
           from item i join store s on s.id = i.store_id
          where i.territory_id = $1::uuid and i.status = 'ACTIVE' and s.status = 'ACTIVE'
       ), stores as (select count(distinct store_id) as n from buyable),
       carts as (
         select c.id, row_number() over (order by c.id) - 1 as k from cart c join app_user u on u.id = c.user_id
          where c.territory_id = $1::uuid and u.external_id like 'bench-buyer-%'
       )
       insert into cart_item (id, created_at_utc, cart_id, item_id, quantity, notes, updated_at_utc)
       select gen_random_uuid(), now(), c.id, b.id, 1 + l.line % 2, null, now()
         from carts c cross join generate_series(0, 2) as l(line) cross join stores
         join buyable b on b.store_k = (c.k + case when l.line = 2 then 1 else 0 end) % stores.n
                       and b.n = 1 + (c.k / stores.n * 2 + case when l.line = 1 then 1 else 0 end) % 40`,
      [territoryId],
    );
    await db.query('analyze store; analyze item; analyze cart; analyze cart_item');
    const { rows } = await db.query<Record<string, number>>(
      `select (select count(*)::int from item where territory_id = $1::uuid) as "marketplaceItems",
              (select count(*)::int from store where territory_id = $1::uuid) as "marketplaceStores",
              (select count(*)::int from cart_item ci join cart c on c.id = ci.cart_id where c.territory_id = $1::uuid) as "cartLines"`,
      [territoryId],
    );
    return rows[0] ?? {};
  },
};

const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
const pick = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)] as T;

export const itemSearchScenario: Scenario = {
  name: 'item search',
  targets: [HOT_READ],
  seed: marketplaceSeed,
  authenticated: true,
  async requests({ db, random, count }) {
    const territoryId = await marketplaceTerritoryId(db);
    return Array.from({ length: count }, () => {
      const kind = random();
      let q: string;
      if (kind < 0.6) {
        // What a search box sends while typing: the first letters (3 and more) of a product word.
        const word = pick(pick(PRODUCTS, random).split(' '), random);
        q = word.slice(0, Math.min(word.length, 3 + Math.floor(random() * (word.length - 2))));
      } else if (kind < 0.9) {
        q = `${pick(ADJECTIVES, random)} ${pick(PRODUCTS, random)}`;
      } else {
        q = pick(ABSENT, random);
      }
      const query = qs({ territoryId, q, take: TAKE });
      return { api: `/api/v1/items?${query}`, baseline: `/baseline/items?${query}` };
    });
  },
  baseline: {
    path: '/baseline/items',
    async handler(pool, request, reply) {
      const q = request.query as Record<string, string | undefined>;
      const [access] = await runPreparedOnPool<TerritoryAccessRow>(pool, territoryAccessQuery(q.territoryId ?? null, await benchViewerId(pool), null));
      if (!access?.id || access.status !== 'ACTIVE' || !(access.enabled_flags ?? []).includes('MARKETPLACEENABLED')) {
        return reply.code(404).send({ status: 404 });
      }
      const rows = await listItemRows((query, options) => runOnPoolAs<ItemRow>(pool, query, options), {
        territoryId: access.id,
        q: q.q || undefined,
        offset: Number(q.skip ?? 0),
        limit: Number(q.take ?? TAKE),
      });
      const ids = rows.map((r) => r.id);
      const urls = await liveMediaWith((query) => runPreparedOnPool<LiveMediaRow>(pool, query), 'ITEM', ids, mediaUrlOfRow);
      return rows.map((r) => itemOutputOf(r, urls.get(r.id) ?? []));
    },
  },
};

export const checkoutScenario: CustomScenario = {
  name: 'checkout (3-line carts)',
  seed: marketplaceSeed,
  async run({ apiUrl, db, tokenFor, log }) {
    const territoryId = await marketplaceTerritoryId(db);
    const { rows: buyers } = await db.query<{ id: string }>(
      `select u.id from app_user u join cart c on c.user_id = u.id and c.territory_id = $1::uuid
        where u.external_id like 'bench-buyer-%' and exists (select 1 from cart_item ci where ci.cart_id = c.id) order by u.external_id`,
      [territoryId],
    );
    const tokens = await Promise.all(buyers.map((b) => tokenFor(b.id)));
    const body = JSON.stringify({ territoryId, paymentMethod: 'PIX' });
    let next = 0;
    log(`checkout: ${tokens.length} buyers, 10 at a time`);
    const load = await driveEach({
      baseUrl: apiUrl,
      connections: 10,
      amount: tokens.length,
      next: () => ({
        method: 'POST',
        path: '/api/v1/cart/checkout',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[next++ % tokens.length]}` },
        body,
      }),
    });
    // Every buyer's cart became its checkouts (one per store) and is empty now.
    const { rows } = await db.query<{ buyers: number; checkouts: number; left: number }>(
      `select (select count(distinct buyer_user_id)::int from checkout where territory_id = $1::uuid) as buyers,
              (select count(*)::int from checkout where territory_id = $1::uuid) as checkouts,
              (select count(*)::int from cart_item ci join cart c on c.id = ci.cart_id where c.territory_id = $1::uuid) as "left"`,
      [territoryId],
    );
    const done = rows[0] ?? { buyers: 0, checkouts: 0, left: 0 };
    return {
      figures: {
        buyers: tokens.length,
        checkoutCallsPerSec: Math.round(load.reqPerSec * 10) / 10,
        checkoutsCreated: done.checkouts,
        p50Ms: load.p50Ms,
        p99Ms: load.p99Ms,
      },
      failures: load.failures + (tokens.length - done.buyers) + done.left,
    };
  },
};
