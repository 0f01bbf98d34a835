import { expect } from 'vitest';
import { signWebhook } from '../../src/routers/payments/gateway.js';
import type { TestTerritory, TestUser } from '../factories/index.js';
import type { TestApp } from '../setup/test-app.js';

/** A store of `owner` in the territory; its id. */
export async function openStore(t: TestApp, owner: TestUser, territory: TestTerritory) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/stores',
    headers: owner.headers,
    payload: { territoryId: territory.id, displayName: 'Bakery', contactVisibility: 'Public', contact: { email: 'b@example.org' } },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

/** An item of the store (FIXED 12.00 BRL unless told); its id. */
export async function listItem(t: TestApp, owner: TestUser, storeId: string, extra: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/items',
    headers: owner.headers,
    payload: { storeId, type: 'PRODUCT', title: 'Sourdough loaf', pricingType: 'FIXED', priceAmount: 12, ...extra },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

export const addToCart = (t: TestApp, user: TestUser | null, payload: Record<string, unknown>, url = '/api/v1/cart/items') =>
  t.app.inject({ method: 'POST', url, headers: user?.headers ?? {}, payload });

export const checkout = (t: TestApp, user: TestUser | null, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/cart/checkout', headers: { ...(user?.headers ?? {}), ...headers }, payload });

/** Sends a fake-gateway webhook, signed with the configured secret unless `signature` is given. */
export function sendWebhook(t: TestApp, body: unknown, signature?: string) {
  const raw = JSON.stringify(body);
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/payments/webhooks/fake',
    headers: { 'content-type': 'application/json', 'x-signature': signature ?? signWebhook(t.deps.config.payments.webhookSecret, raw) },
    payload: raw,
  });
}

/** Every ledger transaction sums to zero per currency; every amount is an integer. */
export async function expectLedgerBalanced(t: TestApp) {
  const sums = await t.sql<{ total: string }>('select sum(amount_in_cents)::text as total from ledger_entry group by transaction_id, currency');
  for (const s of sums) expect(s.total).toBe('0');
}
