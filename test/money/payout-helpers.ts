import { expect } from 'vitest';
import type { JobContext } from '../../src/platform/job.js';
import { payoutStatusSyncJob } from '../../src/routers/payouts/payout-status-sync.job.js';
import { payoutsRunJob } from '../../src/routers/payouts/payouts-run.job.js';
import { sellerBalanceReleaseJob } from '../../src/routers/payouts/seller-balance-release.job.js';
import { newResident, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { addToCart, checkout, listItem, openStore, sendWebhook } from '../marketplace/money-helpers.js';
import type { TestApp } from '../setup/test-app.js';

export interface Shop {
  territory: TestTerritory;
  seller: TestUser;
  storeId: string;
  itemId: string;
}

/**
 * A marketplace territory with a verified resident selling one item (`price` in BRL, as the API takes it) with a
 * platform fee of `feeBasisPoints` (none when 0), and, when given, a payout configuration.
 */
export async function shop(
  t: TestApp,
  admin: TestUser,
  opts: { price?: string; feeBasisPoints?: number; config?: Record<string, unknown> } = {},
): Promise<Shop> {
  const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  const seller = await newResident(t, territory, { verified: true });
  const storeId = await openStore(t, seller, territory);
  const itemId = await listItem(t, seller, storeId, { priceAmount: opts.price ?? '25.50' });
  const fee = opts.feeBasisPoints ?? 1000;
  if (fee > 0) {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/territories/${territory.id}/platform-fees`,
      headers: admin.headers,
      payload: { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: fee, isActive: true },
    });
    expect(res.statusCode).toBe(200);
  }
  if (opts.config) await configurePayouts(t, admin, territory.id, opts.config);
  return { territory, seller, storeId, itemId };
}

export const MANUAL_CONFIG = { retentionPeriodDays: 0, minimumPayoutAmountInCents: 0, maximumPayoutAmountInCents: null, frequency: 'Manual' };

export async function configurePayouts(t: TestApp, admin: TestUser, territoryId: string, config: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/territories/${territoryId}/payout-config`,
    headers: admin.headers,
    payload: { ...MANUAL_CONFIG, ...config },
  });
  expect(res.statusCode).toBeLessThan(300);
}

/** A PAID checkout of `quantity` items of the shop's item, bought by a new user; its id. */
export async function paidSale(t: TestApp, s: Shop, quantity = 1): Promise<string> {
  const buyer = await newUser(t);
  expect((await addToCart(t, buyer, { itemId: s.itemId, quantity })).statusCode).toBe(201);
  const res = await checkout(t, buyer, { territoryId: s.territory.id });
  expect(res.statusCode).toBe(201);
  const c = res.json().checkouts[0];
  const hook = await sendWebhook(t, {
    id: `evt_${c.id}`,
    type: 'payment.succeeded',
    data: { paymentId: c.payment.id, checkoutId: c.id, amountInCents: c.payment.amountInCents, currency: c.payment.currency },
  });
  expect(hook.json()).toEqual({ received: true, outcome: 'PAID' });
  return c.id as string;
}

/** A job context as the worker builds it, with a fixed clock when given. */
export const jobContext = (t: TestApp, now?: Date): JobContext => ({
  em: t.deps.orm.em.fork(),
  storage: t.deps.storage,
  clock: { now: () => now ?? new Date() },
  config: t.deps.config,
});

export const release = (t: TestApp, now?: Date) => sellerBalanceReleaseJob.handle(jobContext(t, now), {});
export const runJob = (t: TestApp, territoryId?: string, now?: Date) => payoutsRunJob.handle(jobContext(t, now), territoryId ? { territoryId } : {});
export const syncJob = (t: TestApp, now?: Date) => payoutStatusSyncJob.handle(jobContext(t, now), {});

export const get = (t: TestApp, url: string, user: TestUser | null) => t.app.inject({ method: 'GET', url, headers: user?.headers ?? {} });

export async function balanceOf(t: TestApp, s: Shop) {
  const res = await get(t, `/api/v1/territories/${s.territory.id}/seller-balance/me`, s.seller);
  expect(res.statusCode).toBe(200);
  return res.json() as {
    pendingAmountInCents: number;
    readyForPayoutAmountInCents: number;
    inTransitAmountInCents: number;
    paidAmountInCents: number;
  };
}

/** The seller's payouts straight from the table, oldest first. */
export const payoutsOf = (t: TestApp, sellerUserId: string) =>
  t.sql<{ id: string; amount: string; status: string; transaction_ids: string[]; failure_reason: string | null }>(
    'select id, amount_in_cents::text as amount, status, transaction_ids, failure_reason from payout where seller_user_id = $1 order by created_at_utc, id',
    [sellerUserId],
  );
