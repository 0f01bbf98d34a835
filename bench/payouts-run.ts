/**
 * npm run bench:payouts [-- --smoke]: the payout run at scale (issue 10, Performance). A throw-away embedded
 * PostgreSQL with the schema; one marketplace territory whose 10,000 sellers (smoke: 200) each have one READY sale,
 * and a paid-out history that brings the ledger to about 1M entries (smoke: 20k), all seeded with set-based SQL as
 * balanced ledger transactions (the ledger's triggers check every one at commit). Then the real `runPayouts` (fake
 * payout gateway) and the real `syncPayoutStatuses`, as the job workers call them, on the app's least-privilege role.
 * Prints the time of each, the rows written per second (payouts + ledger entries), whether the 10 s target is met,
 * checks that every seller was paid exactly their ready money, and prints the EXPLAIN ANALYZE of the seller-balance
 * read (index-backed with 1M entries). Writes bench/results/payouts-latest.json. Run it once on a quiet machine.
 *
 * `seedPayoutSellers` is exported for test/money/seller-balance-indexes.test.ts (the same seed, a few thousand entries).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createOrm, migrate } from '../src/db/orm.js';
import { APP_ROLE, ensureAppRole } from '../src/db/roles.js';
import { runSql, type SqlQuery } from '../src/db/sql.js';
import { FakePayoutGateway } from '../src/routers/payouts/payout-gateway.js';
import { syncPayoutStatuses } from '../src/routers/payouts/payout-status-sync.js';
import { runPayouts } from '../src/routers/payouts/payouts-run.js';
import {
  latestSellerCurrencyQuery,
  sellerBalanceSumsQuery,
  sellerInTransitQuery,
  sellerTransactionsQuery,
} from '../src/routers/payouts/seller-balance.queries.js';
import { sellerBalanceOf } from '../src/routers/payouts/seller-balance.service.js';
import { freePort } from './servers.js';

/** Runs one statement and answers its rows (a pg client's or the tests' `t.sql`). */
export type Query = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

/** Ledger entries of one paid-out sale (paid 3, ready 2, payout sent 2, payout paid 2) and of one READY sale (paid 3, ready 2). */
export const ENTRIES_PER_HISTORY_SALE = 9;
export const ENTRIES_PER_READY_SALE = 5;

export interface PayoutSeedOptions {
  /** An existing territory (MARKETPLACEENABLED) and buyer. */
  territoryId: string;
  buyerUserId: string;
  sellers: number;
  /** Sales per seller already paid out (COMPLETED payouts), before the READY ones. */
  historySalesPerSeller: number;
  /** Sales per seller READY for payout (default 1). */
  readySalesPerSeller?: number;
  /** Sellers per statement. */
  chunkSellers?: number;
  /** Called after each chunk with the sellers seeded so far. */
  progress?: (sellersDone: number) => void;
}

/**
 * Seeds `sellers` verified sellers, each with a store, `historySalesPerSeller` sales already paid out and
 * `readySalesPerSeller` (default 1) READY for payout, in the territory; every sale is a PAID checkout with its seller transaction, and every money
 * movement the balanced ledger transaction the services write, under the same idempotency keys
 * (`checkout:{id}:paid`, `seller-tx:{id}:ready`, `payout:{id}:sent`, `payout:{id}:paid`). One data-modifying
 * statement per chunk of sellers. Amounts: gross 10.00..99.90 BRL in steps of 0.10, fee 10 %, so no net amount ends in
 * 666 cents (the fake payout gateway fails those). Answers the rows written.
 */
export async function seedPayoutSellers(query: Query, opts: PayoutSeedOptions) {
  const chunk = opts.chunkSellers ?? 1000;
  const readySales = opts.readySalesPerSeller ?? 1;
  await query(
    `insert into ledger_account (id, created_at_utc, territory_id, currency, kind, owner_user_id)
     select gen_random_uuid(), now(), $1, 'BRL', k.kind, null from unnest(array['gateway_clearing', 'platform_revenue', 'payouts_in_transit']) as k(kind)
     on conflict do nothing`,
    [opts.territoryId],
  );
  for (let from = 0; from < opts.sellers; from += chunk) {
    const to = Math.min(opts.sellers, from + chunk);
    await query(
      `with sellers as materialized (
         select gen_random_uuid() as user_id, gen_random_uuid() as store_id, g.i from generate_series($3::int, $4::int - 1) as g(i)
       ),
       sales as materialized (
         select gen_random_uuid() as checkout_id, gen_random_uuid() as seller_tx_id, gen_random_uuid() as payout_id, s.user_id, s.store_id,
                k.k > $5::int as ready, (100 + (s.i * 7 + k.k * 13) % 900) * 10 as gross,
                now() - make_interval(days => case when k.k > $5::int then 1 else 2 + ($5::int - k.k) * 7 end) as paid_at
           from sellers s cross join generate_series(1, $5::int + $6::int) as k(k)
       ),
       amounts as materialized (select sales.*, gross / 10 as fee, gross - gross / 10 as net from sales),
       new_users as (
         insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
         select user_id, now(), 'Seller ' || i, 'bench', 'payout-seller-' || user_id, 'Verified' from sellers
       ),
       new_stores as (
         insert into store (id, created_at_utc, territory_id, owner_user_id, display_name, contact_visibility, updated_at_utc)
         select store_id, now(), $1, user_id, 'Store ' || i, 'Public', now() from sellers
       ),
       new_checkouts as (
         insert into checkout (id, created_at_utc, territory_id, store_id, buyer_user_id, seller_user_id, status, payment_method, currency,
                               items_subtotal_in_cents, platform_fee_in_cents, total_in_cents, paid_at_utc, updated_at_utc)
         select checkout_id, paid_at, $1, store_id, $2, user_id, 'PAID', 'PIX', 'BRL', gross, fee, gross, paid_at, paid_at from amounts
       ),
       new_seller_transactions as (
         insert into seller_transaction (id, created_at_utc, territory_id, store_id, checkout_id, seller_user_id, gross_amount_in_cents,
                                         platform_fee_in_cents, net_amount_in_cents, currency, status, ready_for_payout_at_utc, payout_id, paid_at_utc, updated_at_utc)
         select seller_tx_id, paid_at, $1, store_id, checkout_id, user_id, gross, fee, net, 'BRL', case when ready then 'READY' else 'PAID' end,
                paid_at, case when ready then null else payout_id end, paid_at, paid_at from amounts
       ),
       new_payouts as (
         insert into payout (id, created_at_utc, territory_id, seller_user_id, amount_in_cents, currency, status, transaction_ids, provider,
                             gateway_reference, submitted_at_utc, completed_at_utc, updated_at_utc)
         select payout_id, paid_at + interval '1 day', $1, user_id, net, 'BRL', 'COMPLETED', array[seller_tx_id::text], 'fake',
                'fake_po_' || payout_id, paid_at + interval '1 day', paid_at + interval '1 day', paid_at + interval '1 day'
           from amounts where not ready
       ),
       accounts as materialized (
         insert into ledger_account (id, created_at_utc, territory_id, currency, kind, owner_user_id)
         select gen_random_uuid(), now(), $1, 'BRL', k.kind, s.user_id
           from sellers s cross join unnest(array['seller_pending', 'seller_ready', 'seller_paid']) as k(kind)
         returning id, kind, owner_user_id
       ),
       platform as materialized (
         select id, kind from ledger_account where territory_id = $1 and currency = 'BRL' and owner_user_id is null
       ),
       movements as materialized (
         select gen_random_uuid() as tx_id, m.step, m.at, a.*
           from amounts a
           cross join lateral (values ('paid', a.paid_at), ('ready', a.paid_at), ('sent', a.paid_at + interval '1 day'),
                                      ('settled', a.paid_at + interval '1 day')) as m(step, at)
          where not a.ready or m.step in ('paid', 'ready')
       ),
       new_transactions as (
         insert into ledger_transaction (id, created_at_utc, idempotency_key, territory_id)
         select tx_id, at, case step when 'paid' then 'checkout:' || checkout_id || ':paid' when 'ready' then 'seller-tx:' || seller_tx_id || ':ready'
                                     when 'sent' then 'payout:' || payout_id || ':sent' else 'payout:' || payout_id || ':paid' end, $1
           from movements
       ),
       legs as (
         select mv.tx_id, mv.at, mv.user_id, l.kind, l.seller, l.amount
           from movements mv
           cross join lateral (values
             ('paid', 'gateway_clearing', false, -mv.gross), ('paid', 'seller_pending', true, mv.net), ('paid', 'platform_revenue', false, mv.fee),
             ('ready', 'seller_pending', true, -mv.net), ('ready', 'seller_ready', true, mv.net),
             ('sent', 'seller_ready', true, -mv.net), ('sent', 'payouts_in_transit', false, mv.net),
             ('settled', 'payouts_in_transit', false, -mv.net), ('settled', 'seller_paid', true, mv.net)
           ) as l(step, kind, seller, amount)
          where l.step = mv.step
       )
       insert into ledger_entry (id, created_at_utc, transaction_id, account_id, amount_in_cents, currency)
       select gen_random_uuid(), lg.at, lg.tx_id, coalesce(sa.id, pa.id), lg.amount, 'BRL'
         from legs lg
         left join accounts sa on lg.seller and sa.owner_user_id = lg.user_id and sa.kind = lg.kind
         left join platform pa on not lg.seller and pa.kind = lg.kind`,
      [opts.territoryId, opts.buyerUserId, from, to, opts.historySalesPerSeller, readySales],
    );
    opts.progress?.(to);
  }
  const sales = opts.sellers * (opts.historySalesPerSeller + readySales);
  return {
    sellers: opts.sellers,
    sales,
    readySales: opts.sellers * readySales,
    paidOutPayouts: opts.sellers * opts.historySalesPerSeller,
    ledgerEntries: opts.sellers * (opts.historySalesPerSeller * ENTRIES_PER_HISTORY_SALE + readySales * ENTRIES_PER_READY_SALE),
  };
}

/** The seller-balance read (as `GET .../seller-balance/me` sends it) and the seller's transactions page, for EXPLAIN. */
export function sellerBalanceReads(territoryId: string, sellerUserId: string): Array<{ name: string; query: SqlQuery }> {
  return [
    { name: 'latest sale currency', query: latestSellerCurrencyQuery(territoryId, sellerUserId) },
    { name: 'balance sums (pending, ready, paid)', query: sellerBalanceSumsQuery(territoryId, 'BRL', sellerUserId) },
    { name: 'in transit (open payouts)', query: sellerInTransitQuery(territoryId, 'BRL', sellerUserId) },
    { name: 'seller transactions page', query: sellerTransactionsQuery(territoryId, sellerUserId) },
  ];
}

/** Tables whose sequential scan would make a seller-balance read grow with the ledger. */
export const SELLER_READ_TABLES = ['ledger_entry', 'ledger_account', 'seller_transaction', 'payout'];

/** Whether a text plan scans one of those tables sequentially. */
export const seqScanIn = (plan: string) => SELLER_READ_TABLES.filter((table) => new RegExp(`Seq Scan on ${table}\\b`).test(plan));

// ---------------------------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------------------------

const TARGET_SECONDS = 10;

async function main() {
  const smoke = process.argv.includes('--smoke');
  const size = smoke ? { sellers: 200, ledgerEntries: 20_000, busySales: 500 } : { sellers: 10_000, ledgerEntries: 1_000_000, busySales: 10_000 };
  const historySalesPerSeller = Math.ceil((size.ledgerEntries / size.sellers - ENTRIES_PER_READY_SALE) / ENTRIES_PER_HISTORY_SALE);
  const startedAt = Date.now();
  const log = (message: string) => console.log(`[bench:payouts ${((Date.now() - startedAt) / 1000).toFixed(1).padStart(5)} s] ${message}`);

  const cleanups: Array<() => Promise<void> | void> = [];
  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const step of cleanups.reverse()) {
        try {
          await step();
        } catch (error) {
          console.error('cleanup step failed:', error);
        }
      }
    })());
  const abort = async (reason: string, code: number) => {
    console.error(`bench:payouts: ${reason}; stopping`);
    await cleanup();
    process.exit(code);
  };
  process.once('SIGINT', () => void abort('interrupted', 130));
  process.once('SIGTERM', () => void abort('terminated', 143));
  const deadline = setTimeout(() => void abort('deadline reached', 1), smoke ? 120_000 : 20 * 60_000);
  const dir = mkdtempSync(join(tmpdir(), 'territory-bench-payouts-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));

  try {
    const db = await startEmbeddedPostgres({ dir, port: await freePort(), persistent: false, fast: true });
    cleanups.push(() => db.stop());
    await db.createDatabase('bench');
    const ownerUrl = db.url('bench');
    const setup = await createOrm(ownerUrl);
    try {
      await migrate(setup);
      // As bench/run.ts and the tests: entities newer than the last migration still get their tables.
      await setup.em.getConnection().execute('create extension if not exists pg_trgm');
      await setup.schema.update();
    } finally {
      await setup.close();
    }
    const password = randomBytes(24).toString('hex');
    await ensureAppRole(ownerUrl, APP_ROLE, password);
    log(`database ready (${smoke ? 'smoke' : 'full'}: ${size.sellers} sellers, ~${size.ledgerEntries} ledger entries)`);

    // Seeding as the owner: set-based SQL, balanced ledger transactions.
    const client = new pg.Client({ connectionString: ownerUrl });
    await client.connect();
    cleanups.push(() => client.end());
    const query: Query = async (sql, params) => (await client.query(sql, params)).rows;
    const [territory] = await query<{ id: string }>(
      `insert into territory (id, created_at_utc, name, city, state, latitude, longitude, status, tags, enabled_flags)
       values (gen_random_uuid(), now(), 'Payout Bench', 'São Paulo', 'SP', -23.55, -46.63, 'ACTIVE', '{}', array['MARKETPLACEENABLED']) returning id`,
    );
    const territoryId = territory!.id;
    const [buyer] = await query<{ id: string }>(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       values (gen_random_uuid(), now(), 'Bench Buyer', 'bench', 'payout-buyer', 'Unverified') returning id`,
    );
    await query(
      `insert into payout_config (id, created_at_utc, territory_id, retention_period_days, minimum_payout_amount_in_cents, maximum_payout_amount_in_cents,
                                  frequency, auto_payout_enabled, requires_approval, currency, is_active, updated_at_utc)
       values (gen_random_uuid(), now(), $1, 0, 0, null, 'Manual', false, false, 'BRL', true, now())`,
      [territoryId],
    );
    const seedStarted = performance.now();
    const seeded = await seedPayoutSellers(query, {
      territoryId,
      buyerUserId: buyer!.id,
      sellers: size.sellers,
      historySalesPerSeller,
      chunkSellers: smoke ? 100 : 1000,
      progress: (done) => log(`seeded ${done} / ${size.sellers} sellers`),
    });
    await query('vacuum analyze');
    const [counted] = await query<{ entries: number; ready: number }>(
      `select (select count(*) from ledger_entry)::int as entries,
              (select count(*) from seller_transaction where territory_id = $1 and status = 'READY' and payout_id is null)::int as ready`,
      [territoryId],
    );
    log(`seeded ${counted!.entries} ledger entries, ${counted!.ready} READY sales in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    // The run and the sync, as the job workers call them, on the app's role.
    const orm = await createOrm(db.urlAs('bench', APP_ROLE, password));
    cleanups.push(() => orm.close());
    const gateway = new FakePayoutGateway();
    const entriesNow = async () => Number((await query<{ n: string }>('select count(*)::text as n from ledger_entry'))[0]!.n);
    const entriesBefore = await entriesNow();
    const runAt = new Date();
    let t0 = performance.now();
    const run = await runPayouts(orm.em.fork(), gateway, runAt, territoryId);
    const runSeconds = (performance.now() - t0) / 1000;
    const entriesAfterRun = await entriesNow();
    log(`payouts-run: ${run.created} payouts created, ${run.submitted} submitted in ${runSeconds.toFixed(2)} s`);
    t0 = performance.now();
    const sync = await syncPayoutStatuses(orm.em.fork(), gateway, new Date(), territoryId);
    const syncSeconds = (performance.now() - t0) / 1000;
    const entriesAfterSync = await entriesNow();
    log(`payout-status-sync: ${sync.completed} completed, ${sync.failed} failed in ${syncSeconds.toFixed(2)} s`);

    // Every seller was paid their READY sale, exactly once, and nothing is left in ready or in transit.
    const [check] = await query<{ unpaid: number; payouts: number; paid: string; ready: string; transit: string; expected: string }>(
      `select (select count(*) from seller_transaction where territory_id = $1 and status <> 'PAID')::int as unpaid,
              (select count(*) from payout where territory_id = $1 and status = 'COMPLETED' and created_at_utc >= $2)::int as payouts,
              (select coalesce(sum(e.amount_in_cents), 0) from ledger_entry e join ledger_account a on a.id = e.account_id
                where a.territory_id = $1 and a.kind = 'seller_paid')::text as paid,
              (select coalesce(sum(e.amount_in_cents), 0) from ledger_entry e join ledger_account a on a.id = e.account_id
                where a.territory_id = $1 and a.kind = 'seller_ready')::text as ready,
              (select coalesce(sum(e.amount_in_cents), 0) from ledger_entry e join ledger_account a on a.id = e.account_id
                where a.territory_id = $1 and a.kind = 'payouts_in_transit')::text as transit,
              (select coalesce(sum(net_amount_in_cents), 0) from seller_transaction where territory_id = $1)::text as expected`,
      [territoryId, runAt],
    );
    const failures: string[] = [];
    if (run.created !== size.sellers) failures.push(`${run.created} payouts created, expected ${size.sellers}`);
    if (sync.completed !== size.sellers || sync.failed > 0 || run.errors.length + run.failedTerritories.length + sync.errors.length > 0)
      failures.push('not every payout completed');
    if (check!.payouts !== size.sellers) failures.push(`${check!.payouts} payouts of this run COMPLETED, expected ${size.sellers}`);
    if (check!.unpaid !== 0) failures.push(`${check!.unpaid} seller transactions not PAID`);
    if (check!.ready !== '0' || check!.transit !== '0') failures.push(`ready ${check!.ready} and in transit ${check!.transit}, expected 0`);
    if (check!.paid !== check!.expected) failures.push(`sellers were paid ${check!.paid}, expected ${check!.expected}`);

    const payoutRows = run.created;
    const runEntries = entriesAfterRun - entriesBefore;
    const syncEntries = entriesAfterSync - entriesAfterRun;
    const totalSeconds = runSeconds + syncSeconds;
    const rowsPerSecond = (rows: number, seconds: number) => Math.round(rows / seconds);

    // The seller-balance read with the whole ledger: EXPLAIN ANALYZE of each statement, for one seeded seller.
    const [seller] = await query<{ seller_user_id: string }>(
      `select seller_user_id from seller_transaction where territory_id = $1 order by seller_user_id offset $2 limit 1`,
      [territoryId, Math.floor(size.sellers / 2)],
    );
    const plans: Array<{ name: string; executionMs: number; seqScans: string[]; plan: string }> = [];
    for (const { name, query: q } of sellerBalanceReads(territoryId, seller!.seller_user_id)) {
      const rows = await runSql<{ 'QUERY PLAN': string }>(orm.em.fork(), { sql: `explain (analyze, buffers) ${q.sql}`, params: q.params });
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      plans.push({ name, plan, seqScans: seqScanIn(plan), executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN) });
    }
    // The whole read as the service does it (a few statements), warm.
    const reads = 200;
    const em = orm.em.fork();
    await sellerBalanceOf(em, territoryId, seller!.seller_user_id);
    t0 = performance.now();
    for (let i = 0; i < reads; i += 1) await sellerBalanceOf(em, territoryId, seller!.seller_user_id);
    const balanceReadMs = (performance.now() - t0) / reads;
    for (const p of plans) if (p.seqScans.length > 0) failures.push(`${p.name}: sequential scan on ${p.seqScans.join(', ')}`);

    // A busy seller: all their READY sales in one payout, one line each (what the lines' checks cost at commit).
    const [busyTerritory] = await query<{ id: string }>(
      `insert into territory (id, created_at_utc, name, city, state, latitude, longitude, status, tags, enabled_flags)
       values (gen_random_uuid(), now(), 'Payout Bench Busy', 'São Paulo', 'SP', -23.56, -46.64, 'ACTIVE', '{}', array['MARKETPLACEENABLED']) returning id`,
    );
    await query(
      `insert into payout_config (id, created_at_utc, territory_id, retention_period_days, minimum_payout_amount_in_cents, maximum_payout_amount_in_cents,
                                  frequency, auto_payout_enabled, requires_approval, currency, is_active, updated_at_utc)
       values (gen_random_uuid(), now(), $1, 0, 0, null, 'Manual', false, false, 'BRL', true, now())`,
      [busyTerritory!.id],
    );
    await seedPayoutSellers(query, {
      territoryId: busyTerritory!.id,
      buyerUserId: buyer!.id,
      sellers: 1,
      historySalesPerSeller: 0,
      readySalesPerSeller: size.busySales,
    });
    await query('analyze');
    t0 = performance.now();
    const busyRun = await runPayouts(orm.em.fork(), gateway, new Date(), busyTerritory!.id);
    const busyRunSeconds = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const busySync = await syncPayoutStatuses(orm.em.fork(), gateway, new Date(), busyTerritory!.id);
    const busySyncSeconds = (performance.now() - t0) / 1000;
    const [busy] = await query<{ payouts: number; lines: number; unpaid: number }>(
      `select (select count(*) from payout where territory_id = $1 and status = 'COMPLETED')::int as payouts,
              (select count(*) from payout_line l join payout p on p.id = l.payout_id where p.territory_id = $1)::int as lines,
              (select count(*) from seller_transaction where territory_id = $1 and status <> 'PAID')::int as unpaid`,
      [busyTerritory!.id],
    );
    if (busyRun.created !== 1 || busySync.completed !== 1 || busy!.payouts !== 1 || busy!.lines !== size.busySales || busy!.unpaid !== 0) {
      failures.push(
        `busy seller: ${busy!.payouts} payouts COMPLETED with ${busy!.lines} lines, ${busy!.unpaid} sales not PAID; expected 1 with ${size.busySales}, 0`,
      );
    }

    console.log('');
    console.log(
      `Payout run over ${size.sellers.toLocaleString('en')} sellers with ready balances in one territory (${counted!.entries.toLocaleString('en')} ledger entries before the run):`,
    );
    console.log(
      `  payouts-run          ${runSeconds.toFixed(2).padStart(6)} s  ${payoutRows} payouts + ${runEntries} ledger entries  ${rowsPerSecond(payoutRows + runEntries, runSeconds).toLocaleString('en')} rows/s`,
    );
    console.log(
      `  payout-status-sync   ${syncSeconds.toFixed(2).padStart(6)} s  ${sync.completed} payouts settled + ${syncEntries} ledger entries  ${rowsPerSecond(sync.completed + syncEntries, syncSeconds).toLocaleString('en')} rows/s`,
    );
    console.log(
      `  run + sync           ${totalSeconds.toFixed(2).padStart(6)} s  ${rowsPerSecond(payoutRows + runEntries + sync.completed + syncEntries, totalSeconds).toLocaleString('en')} rows/s`,
    );
    console.log(`  target: run + sync under ${TARGET_SECONDS} s: ${totalSeconds < TARGET_SECONDS ? 'MET' : 'MISSED'}`);
    console.log(
      `  busy seller          ${busyRunSeconds.toFixed(2).padStart(6)} s  payouts-run of one seller's ${size.busySales.toLocaleString('en')} READY sales: 1 payout of ${busy!.lines.toLocaleString('en')} lines; its sync ${busySyncSeconds.toFixed(2)} s`,
    );
    console.log('');
    console.log(
      `Seller-balance read with ${entriesAfterSync.toLocaleString('en')} ledger entries (GET .../seller-balance/me: ${balanceReadMs.toFixed(2)} ms per read, warm):`,
    );
    for (const p of plans) {
      console.log(`\n-- ${p.name}: ${p.executionMs} ms, ${p.seqScans.length === 0 ? 'index-backed' : `SEQUENTIAL SCAN on ${p.seqScans.join(', ')}`}`);
      console.log(p.plan);
    }
    console.log('');
    if (failures.length > 0) console.log(`FAILED:\n  ${failures.join('\n  ')}`);
    else console.log('checks: every seller paid once, nothing left in ready or in transit, every read index-backed');

    const resultsDir = resolve(import.meta.dirname, 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(
      join(resultsDir, 'payouts-latest.json'),
      `${JSON.stringify(
        {
          mode: smoke ? 'smoke' : 'full',
          date: new Date().toISOString(),
          node: process.version,
          seeded: { ...seeded, ledgerEntriesCounted: counted!.entries },
          run: { seconds: runSeconds, payouts: payoutRows, ledgerEntries: runEntries, rowsPerSecond: rowsPerSecond(payoutRows + runEntries, runSeconds) },
          sync: {
            seconds: syncSeconds,
            settled: sync.completed,
            ledgerEntries: syncEntries,
            rowsPerSecond: rowsPerSecond(sync.completed + syncEntries, syncSeconds),
          },
          totalSeconds,
          busySeller: { sales: size.busySales, runSeconds: busyRunSeconds, syncSeconds: busySyncSeconds, lines: busy!.lines },
          targetSeconds: TARGET_SECONDS,
          targetMet: totalSeconds < TARGET_SECONDS,
          sellerBalanceRead: { perReadMs: balanceReadMs, statements: plans.map(({ name, executionMs, seqScans }) => ({ name, executionMs, seqScans })) },
          failures,
        },
        null,
        2,
      )}\n`,
    );
    clearTimeout(deadline);
    await cleanup();
    process.exit(failures.length > 0 ? 1 : 0);
  } catch (error) {
    console.error(error);
    clearTimeout(deadline);
    await cleanup();
    process.exit(1);
  }
}

// Run only as a script (`npm run bench:payouts`), not when a test imports the seed.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
