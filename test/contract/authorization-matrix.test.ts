import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openApiDocument } from '../../src/app.js';
import { seedSystemConfig } from '../../src/db/seed/system-config.js';
import { TERRITORY_FEATURE_FLAGS } from '../../src/entities/territory.entity.js';
import { newId } from '../../src/platform/ids.js';
import { signWebhook } from '../../src/routers/payments/gateway.js';
import { newEvent, newMapEntity, newPost } from '../factories/content.js';
import {
  addMembership,
  everyTableCount,
  newAdmin,
  newCurator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestTerritory,
  type TestUser,
} from '../factories/index.js';
import { multipartBody, TINY_PDF, TINY_PNG } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * The authorization matrix: every operation of the OpenAPI document that names something in its path (an id, a
 * territory, a user, a key) is called by each kind of caller on a fresh object, and the answers must be the ones
 * written here. An operation added to the document without a row fails the first test: whoever adds it decides,
 * here, who may call it. The callers, for an object in territory T:
 * - owner: whom the object belongs to (its author, creator, requester, subject; for territory-level operations a
 *   verified resident of T acting for themselves);
 * - member: another verified resident of T;
 * - visitor: a VISITOR of T;
 * - outsider: a verified resident of another territory only;
 * - curator: a curator of T;
 * - admin: a SYSTEM_ADMIN with no membership.
 * Anonymous calls are covered for every operation by test/contract/openapi.test.ts (401).
 */
const CALLERS = ['owner', 'member', 'visitor', 'outsider', 'curator', 'admin'] as const;
type Caller = (typeof CALLERS)[number];

interface World {
  t: TestApp;
  territory: TestTerritory;
  /** A territory the outsider lives in. */
  elsewhere: TestTerritory;
}

/** Fresh callers for each operation: a call may change its caller (entering a territory, becoming resident...). */
async function callersFor(w: World): Promise<Omit<Record<Caller, TestUser>, 'owner'>> {
  return {
    member: await newResident(w.t, w.territory, { verified: true }),
    visitor: await newVisitor(w.t, w.territory),
    outsider: await newResident(w.t, w.elsewhere, { verified: true }),
    curator: await newCurator(w.t, w.territory),
    admin: await newAdmin(w.t),
  };
}

interface Call {
  url: string;
  owner: TestUser;
  payload?: Record<string, unknown>;
  multipart?: { payload: Buffer; headers: Record<string, string> };
  /** A journeys (v2) call: this client token in Authorization, the caller's token in X-User-Token. */
  client?: string;
}

type Expected = Record<Caller, number>;
interface Row {
  /** Builds a fresh object and the call on it (run once per caller). */
  make(w: World): Promise<Call>;
  expect: Expected;
}

const all = (status: number): Expected => ({ owner: status, member: status, visitor: status, outsider: status, curator: status, admin: status });
const adminOnly = (ok: number): Expected => ({ owner: 403, member: 403, visitor: 403, outsider: 403, curator: 403, admin: ok });

// ---- fixtures: each creates what one call needs, owned by a fresh user

const resident = (w: World) => newResident(w.t, w.territory, { verified: true });
const T = (w: World) => w.territory.id;

async function granted(w: World, permission: string) {
  const user = await newUser(w.t);
  await w.t.sql('insert into user_permission (id, created_at_utc, user_id, permission) values ($1, now(), $2, $3)', [newId(), user.id, permission]);
  return user;
}

async function withModerator(w: World) {
  const user = await newUser(w.t);
  await addMembership(w.t, user, w.territory, { role: 'RESIDENT', capabilities: ['MODERATOR'], geoVerified: true });
  return user;
}

async function post(w: World) {
  const owner = await resident(w);
  return { owner, id: await newPost(w.t, { territoryId: T(w), authorUserId: owner.id }) };
}

async function event(w: World) {
  const owner = await resident(w);
  return { owner, id: await newEvent(w.t, { territoryId: T(w), createdByUserId: owner.id }) };
}

async function mapEntity(w: World) {
  const owner = await resident(w);
  return {
    owner,
    id: await newMapEntity(w.t, { territoryId: T(w), createdByUserId: owner.id, latitude: w.territory.latitude, longitude: w.territory.longitude }),
  };
}

async function created(w: World, owner: TestUser, url: string, payload: Record<string, unknown>) {
  const res = await w.t.app.inject({ method: 'POST', url, headers: owner.headers, payload });
  if (res.statusCode >= 300) throw new Error(`fixture ${url}: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; evidenceId?: string; workItemId?: string };
}

async function alert(w: World) {
  const owner = await resident(w);
  const body = await created(w, owner, '/api/v1/alerts', { territoryId: T(w), title: 'Water', description: 'Brown water today' });
  return { owner, id: body.id };
}

async function asset(w: World) {
  const owner = await resident(w);
  const { latitude, longitude } = w.territory;
  const body = await created(w, owner, '/api/v1/assets', { territoryId: T(w), type: 'square', name: 'Main square', geoAnchors: [{ latitude, longitude }] });
  return { owner, id: body.id };
}

async function naturalAsset(w: World) {
  const owner = await resident(w);
  const { latitude, longitude } = w.territory;
  const body = await created(w, owner, `/api/v1/territories/${T(w)}/natural-assets`, {
    territoryId: T(w),
    type: 'SPRING',
    name: 'Spring',
    latitude,
    longitude,
  });
  return { owner, id: body.id };
}

async function media(w: World) {
  const owner = await resident(w);
  const upload = multipartBody([{ field: 'file', fileName: 'a.png', contentType: 'image/png', bytes: TINY_PNG }]);
  const res = await w.t.app.inject({ method: 'POST', url: '/api/v1/media/upload', headers: { ...owner.headers, ...upload.headers }, payload: upload.payload });
  if (res.statusCode !== 201) throw new Error(`media fixture: ${res.statusCode} ${res.body}`);
  return { owner, id: (res.json() as { id: string }).id };
}

/** A residency document of a fresh, unverified resident: its evidence and the curators' work item. */
async function residencyDocument(w: World) {
  const owner = await newResident(w.t, w.territory);
  const upload = multipartBody([{ field: 'file', fileName: 'bill.pdf', contentType: 'application/pdf', bytes: TINY_PDF }]);
  const res = await w.t.app.inject({
    method: 'POST',
    url: `/api/v1/memberships/${T(w)}/verify-residency/document/upload`,
    headers: { ...owner.headers, ...upload.headers },
    payload: upload.payload,
  });
  if (res.statusCode >= 300) throw new Error(`residency fixture: ${res.statusCode} ${res.body}`);
  const json = res.json() as { evidenceId: string; workItemId: string };
  return { owner, evidenceId: json.evidenceId, workItemId: json.workItemId };
}

/** An identity document of a fresh user: its evidence and the admins' work item. */
async function identityDocument(w: World) {
  const owner = await newUser(w.t);
  const upload = multipartBody([{ field: 'file', fileName: 'id.pdf', contentType: 'application/pdf', bytes: TINY_PDF }]);
  const res = await w.t.app.inject({
    method: 'POST',
    url: '/api/v1/verification/identity/document/upload',
    headers: { ...owner.headers, ...upload.headers },
    payload: upload.payload,
  });
  if (res.statusCode >= 300) throw new Error(`identity fixture: ${res.statusCode} ${res.body}`);
  const json = res.json() as { evidenceId: string; workItemId: string };
  return { owner, evidenceId: json.evidenceId, workItemId: json.workItemId };
}

async function joinRequest(w: World) {
  const owner = await newVisitor(w.t, w.territory);
  const recipient = await resident(w);
  const body = await created(w, owner, `/api/v1/territories/${T(w)}/join-requests`, { recipientUserIds: [recipient.id] });
  return { owner, id: body.id };
}

async function notification(w: World) {
  const owner = await newUser(w.t);
  const id = newId();
  await w.t.sql(
    `insert into notification (id, created_at_utc, user_id, type, title, body, data, source_key) values ($1, now(), $2, 'POST_CREATED', 'Hello', 'Body', '{}', $3)`,
    [id, owner.id, `matrix:${id}`],
  );
  return { owner, id };
}

/** A client application registered by an admin; its "owner" is a plain resident (clients belong to no user). */
async function clientCall(w: World, suffix: string): Promise<Call> {
  const admin = await newAdmin(w.t);
  const body = await created(w, admin, '/api/v1/admin/clients', { name: 'Matrix client', scopes: ['journeys:read'] });
  return { owner: await resident(w), url: `/api/v1/admin/clients/${body.id}${suffix}` };
}

/** A client token holding both journeys scopes (v2 rows). */
async function journeyClient(w: World): Promise<string> {
  const admin = await newAdmin(w.t);
  const body = (await created(w, admin, '/api/v1/admin/clients', { name: 'Matrix journeys', scopes: ['journeys:read', 'journeys:write'] })) as unknown as {
    clientId: string;
    clientSecret: string;
  };
  const res = await w.t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: body.clientId, client_secret: body.clientSecret }).toString(),
  });
  if (res.statusCode !== 200) throw new Error(`fixture client token: ${res.statusCode} ${res.body}`);
  return (res.json() as { access_token: string }).access_token;
}

// ---- marketplace fixtures: a verified resident's store (and an item of it) in the marketplace territory

async function store(w: World) {
  const owner = await resident(w);
  const body = await created(w, owner, '/api/v1/stores', {
    territoryId: T(w),
    displayName: 'Matrix store',
    contactVisibility: 'Public',
    contact: { email: 's@example.org' },
  });
  return { owner, id: body.id };
}

async function item(w: World) {
  const { owner, id: storeId } = await store(w);
  const body = await created(w, owner, '/api/v1/items', { storeId, type: 'PRODUCT', title: 'Sourdough loaf', pricingType: 'FIXED', priceAmount: 12 });
  return { owner, id: body.id };
}

async function storeCall(w: World, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, id } = await store(w);
  return { owner, url: `/api/v1/stores/${id}${suffix}`, payload };
}

async function itemCall(w: World, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, id } = await item(w);
  return { owner, url: `/api/v1/items/${id}${suffix}`, payload };
}

// ---- payout fixtures: a seller (the owner) with one paid sale in the marketplace territory

async function paidSeller(w: World): Promise<{ owner: TestUser; walletId: string; checkoutId: string }> {
  const { owner: seller, id: storeId } = await store(w);
  const { id: itemId } = await created(w, seller, '/api/v1/items', { storeId, type: 'PRODUCT', title: 'Matrix loaf', pricingType: 'FIXED', priceAmount: 12 });
  const buyer = await resident(w);
  await created(w, buyer, '/api/v1/cart/items', { itemId, quantity: 1 });
  const res = await w.t.app.inject({ method: 'POST', url: '/api/v1/cart/checkout', headers: buyer.headers, payload: { territoryId: T(w) } });
  const checkout = res.json().checkouts[0];
  const raw = JSON.stringify({
    id: `evt_${checkout.id}`,
    type: 'payment.succeeded',
    data: { paymentId: checkout.payment.id, checkoutId: checkout.id, amountInCents: checkout.totalInCents, currency: checkout.currency },
  });
  const headers = { 'content-type': 'application/json', 'x-signature': signWebhook(w.t.deps.config.payments.webhookSecret, raw) };
  await w.t.app.inject({ method: 'POST', url: '/api/v1/payments/webhooks/fake', headers, payload: raw });
  const balance = await w.t.app.inject({ method: 'GET', url: `/api/v1/territories/${T(w)}/seller-balance/me`, headers: seller.headers });
  if (balance.statusCode !== 200) throw new Error(`fixture seller balance: ${balance.statusCode} ${balance.body}`);
  return { owner: seller, walletId: balance.json().id, checkoutId: checkout.id };
}

const PAYOUT_CONFIG = { retentionPeriodDays: 0, minimumPayoutAmountInCents: 0, maximumPayoutAmountInCents: null, frequency: 'Manual' };

/** The territory's payout configuration exists (so a POST replaces it: 200). */
async function payoutConfigured(w: World) {
  const admin = await newAdmin(w.t);
  const res = await w.t.app.inject({ method: 'POST', url: `/api/v1/territories/${T(w)}/payout-config`, headers: admin.headers, payload: PAYOUT_CONFIG });
  if (res.statusCode >= 300) throw new Error(`fixture payout config: ${res.statusCode} ${res.body}`);
}

// ---- cart and checkout fixtures: a buyer (the owner) with a cart line, or a checkout, of another resident's item

async function cartLine(w: World) {
  const { id: itemId } = await item(w);
  const owner = await resident(w);
  const body = await created(w, owner, '/api/v1/cart/items', { itemId, quantity: 1 });
  return { owner, id: body.id, itemId };
}

async function cartCall(w: World, path: (line: { id: string; itemId: string }) => string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, ...line } = await cartLine(w);
  return { owner, url: path(line), payload };
}

async function checkoutCall(w: World, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, itemId } = await cartLine(w);
  const res = await w.t.app.inject({ method: 'POST', url: '/api/v1/cart/checkout', headers: owner.headers, payload: { territoryId: T(w) } });
  if (res.statusCode !== 201) throw new Error(`fixture checkout of ${itemId}: ${res.statusCode} ${res.body}`);
  return { owner, url: `/api/v1/checkouts/${res.json().checkouts[0].id}${suffix}`, payload };
}

/** A signed `payment.succeeded` webhook for a fresh checkout (the signature, not the caller, authenticates it). */
async function webhookCall(w: World): Promise<Call> {
  const { owner, url } = await checkoutCall(w, '');
  const checkout = (await w.t.app.inject({ method: 'GET', url, headers: owner.headers })).json();
  const raw = JSON.stringify({
    id: `evt_${checkout.id}`,
    type: 'payment.succeeded',
    data: { paymentId: checkout.payment.id, checkoutId: checkout.id, amountInCents: checkout.totalInCents, currency: checkout.currency },
  });
  const signature = signWebhook(w.t.deps.config.payments.webhookSecret, raw);
  return {
    owner,
    url: '/api/v1/payments/webhooks/fake',
    multipart: { payload: Buffer.from(raw), headers: { 'content-type': 'application/json', 'x-signature': signature } },
  };
}

// ---- chat fixtures: an identity-Verified resident owns an ACTIVE group (or one in the status a row needs)

async function chatOwner(w: World) {
  const owner = await newUser(w.t, { identity: 'Verified' });
  await addMembership(w.t, owner, w.territory, { role: 'RESIDENT', geoVerified: true });
  return owner;
}

async function chatGroup(w: World, status = 'ACTIVE') {
  const owner = await chatOwner(w);
  const body = await created(w, owner, `/api/v1/territories/${T(w)}/chat/groups`, { name: 'Matrix group' });
  await w.t.sql('update chat_conversation set status = $1 where id = $2', [status, body.id]);
  return { owner, id: body.id };
}

async function chatCall(w: World, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, id } = await chatGroup(w);
  return { owner, url: `/api/v1/chat/conversations/${id}${suffix}`, payload };
}

async function chatGroupAction(w: World, status: string, action: string): Promise<Call> {
  const { owner, id } = await chatGroup(w, status);
  return { owner, url: `/api/v1/territories/${T(w)}/chat/groups/${id}/${action}` };
}

const MATRIX: Record<string, Row> = {
  'POST /api/v1/admin/clients/{id}/rotate-secret': { make: async (w) => clientCall(w, '/rotate-secret'), expect: adminOnly(200) },
  'DELETE /api/v1/admin/clients/{id}': { make: async (w) => clientCall(w, ''), expect: adminOnly(204) },
  'GET /api/v1/stores/{storeId}': { make: async (w) => storeCall(w, ''), expect: all(200) },
  'PATCH /api/v1/stores/{storeId}': {
    make: async (w) => storeCall(w, '', { status: 'PAUSED' }),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/items/{itemId}': { make: async (w) => itemCall(w, ''), expect: all(200) },
  'PATCH /api/v1/items/{itemId}': {
    make: async (w) => itemCall(w, '', { title: 'Rye loaf' }),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/items/{itemId}/archive': {
    make: async (w) => itemCall(w, '/archive'),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/items/{itemId}/inquiries': {
    make: async (w) => itemCall(w, '/inquiries', { message: 'Is it still available?' }),
    expect: { owner: 400, member: 201, visitor: 201, outsider: 201, curator: 201, admin: 201 },
  },
  'PATCH /api/v1/cart/items/{id}': {
    make: async (w) => cartCall(w, (l) => `/api/v1/cart/items/${l.id}`, { quantity: 2 }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'PUT /api/v1/cart/items/{id}': {
    make: async (w) => cartCall(w, (l) => `/api/v1/cart/items/${l.id}`, { quantity: 2 }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'PUT /api/v1/cart/{itemId}': {
    make: async (w) => cartCall(w, (l) => `/api/v1/cart/${l.itemId}`, { quantity: 2 }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'DELETE /api/v1/cart/{itemId}': {
    make: async (w) => cartCall(w, (l) => `/api/v1/cart/${l.id}`),
    expect: { owner: 204, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'GET /api/v1/checkouts/{checkoutId}': {
    make: async (w) => checkoutCall(w, ''),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 200 },
  },
  'POST /api/v1/checkouts/{checkoutId}/cancel': {
    make: async (w) => checkoutCall(w, '/cancel'),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 403 },
  },
  'POST /api/v1/checkouts/{checkoutId}/simulate-payment': {
    make: async (w) => checkoutCall(w, '/simulate-payment', { outcome: 'SUCCEEDED' }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 403 },
  },
  'GET /api/v1/stores/{storeId}/orders': {
    make: async (w) => storeCall(w, '/orders'),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'POST /api/v1/payments/webhooks/{provider}': { make: webhookCall, expect: all(200) },
  'GET /api/v1/territories/{territoryId}/platform-fees': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/platform-fees` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'PUT /api/v1/territories/{territoryId}/platform-fees': {
    make: async (w) => ({
      owner: await resident(w),
      url: `/api/v1/territories/${T(w)}/platform-fees`,
      payload: { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 500, isActive: true },
    }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/payout-config': {
    make: async (w) => {
      await payoutConfigured(w);
      return { owner: await resident(w), url: `/api/v1/territories/${T(w)}/payout-config`, payload: PAYOUT_CONFIG };
    },
    expect: adminOnly(200),
  },
  'GET /api/v1/territories/{territoryId}/payout-config': {
    make: async (w) => {
      await payoutConfigured(w);
      return { owner: await resident(w), url: `/api/v1/territories/${T(w)}/payout-config` };
    },
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/territories/{territoryId}/seller-balance/me': {
    make: async (w) => ({ owner: (await paidSeller(w)).owner, url: `/api/v1/territories/${T(w)}/seller-balance/me` }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'GET /api/v1/territories/{territoryId}/seller-balance/me/transactions': {
    make: async (w) => ({ owner: (await paidSeller(w)).owner, url: `/api/v1/territories/${T(w)}/seller-balance/me/transactions` }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'GET /api/v2/journeys/territories/{territoryId}/seller-balance': {
    make: async (w) => ({
      owner: (await paidSeller(w)).owner,
      url: `/api/v2/journeys/territories/${T(w)}/seller-balance`,
      client: await journeyClient(w),
    }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'GET /api/v1/territories/{territoryId}/seller-balance/me/payouts': {
    make: async (w) => ({ owner: (await paidSeller(w)).owner, url: `/api/v1/territories/${T(w)}/seller-balance/me/payouts` }),
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'POST /api/v1/territories/{territoryId}/payouts/run': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/payouts/run` }),
    expect: adminOnly(202),
  },
  'GET /api/v1/territories/{territoryId}/payouts': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/payouts` }),
    expect: adminOnly(200),
  },
  'GET /api/v1/wallets/{walletId}': {
    make: async (w) => {
      const { owner, walletId } = await paidSeller(w);
      return { owner, url: `/api/v1/wallets/${walletId}` };
    },
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'POST /api/v1/merchants/{merchantId}/subscription': {
    make: async (w) => {
      const { owner, id } = await store(w);
      const plans = (await w.t.app.inject({ method: 'GET', url: '/api/v1/subscription-plans' })).json() as { id: string }[];
      return { owner, url: `/api/v1/merchants/${id}/subscription`, payload: { planId: plans[0]!.id } };
    },
    expect: { owner: 201, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'GET /api/v1/merchants/{merchantId}/consumption': {
    make: async (w) => {
      const { owner, id } = await store(w);
      return { owner, url: `/api/v1/merchants/${id}/consumption` };
    },
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'GET /api/v1/subscriptions/{id}': {
    make: async (w) => {
      const { owner, id } = await store(w);
      const res = await w.t.app.inject({ method: 'GET', url: `/api/v1/merchants/${id}/consumption`, headers: owner.headers });
      return { owner, url: `/api/v1/subscriptions/${(res.json() as { subscriptionId: string }).subscriptionId}` };
    },
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'GET /api/v1/territories/{territoryId}/fiscal-pack': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/fiscal-pack` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'PUT /api/v1/territories/{territoryId}/fiscal-pack': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/fiscal-pack`, payload: { packId: 'brazil.v1', status: 'Active' } }),
    expect: adminOnly(200),
  },
  'GET /api/v1/territories/{territoryId}/payment-methods': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/payment-methods` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'PUT /api/v1/territories/{territoryId}/payment-methods': {
    // Every method stays enabled: the other rows' checkouts in this territory pay with the default (PIX).
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/payment-methods`, payload: { methods: ['PIX', 'CARD', 'BOLETO'] } }),
    expect: adminOnly(200),
  },
  'POST /api/v1/checkouts/{checkoutId}/refund': {
    make: async (w) => {
      const { owner, checkoutId } = await paidSeller(w);
      return { owner, url: `/api/v1/checkouts/${checkoutId}/refund` };
    },
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 200 },
  },
  'GET /api/v1/territories/{territoryId}/platform-financial/balance': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/platform-financial/balance` }),
    expect: adminOnly(200),
  },
  'GET /api/v1/territories/{territoryId}/platform-financial/revenue': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/platform-financial/revenue` }),
    expect: adminOnly(200),
  },
  'GET /api/v1/territories/{territoryId}/platform-financial/expenses': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/platform-financial/expenses` }),
    expect: adminOnly(200),
  },
  'GET /api/v1/territories/{territoryId}/platform-financial/transactions': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/platform-financial/transactions` }),
    expect: adminOnly(200),
  },
  'GET /api/v1/territories/{territoryId}/platform-financial/transactions/{financialTransactionId}': {
    make: async (w) => {
      const { owner, checkoutId } = await paidSeller(w);
      const [traced] = await w.t.sql<{ id: string }>(`select id from financial_transaction where related_entity_id = $1 and type = 'CHECKOUT'`, [checkoutId]);
      return { owner, url: `/api/v1/territories/${T(w)}/platform-financial/transactions/${traced!.id}` };
    },
    expect: adminOnly(200),
  },
  'PUT /api/v1/admin/users/{userId}/permissions/{permission}': {
    make: async (w) => {
      const owner = await newUser(w.t);
      return { owner, url: `/api/v1/admin/users/${owner.id}/permissions/FINANCIAL_MANAGER` };
    },
    expect: adminOnly(200),
  },
  'DELETE /api/v1/admin/users/{userId}/permissions/{permission}': {
    make: async (w) => {
      const owner = await granted(w, 'FINANCIAL_MANAGER');
      return { owner, url: `/api/v1/admin/users/${owner.id}/permissions/FINANCIAL_MANAGER` };
    },
    expect: adminOnly(204),
  },
  'PUT /api/v1/territories/{territoryId}/capabilities/{userId}/{capability}': {
    make: async (w) => {
      const owner = await resident(w);
      return { owner, url: `/api/v1/territories/${T(w)}/capabilities/${owner.id}/MODERATOR` };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'DELETE /api/v1/territories/{territoryId}/capabilities/{userId}/{capability}': {
    make: async (w) => {
      const owner = await withModerator(w);
      return { owner, url: `/api/v1/territories/${T(w)}/capabilities/${owner.id}/MODERATOR` };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 204, admin: 204 },
  },
  'GET /api/v1/territories/{id}': { make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}` }), expect: all(200) },
  'GET /api/v1/territories/{id}/features': { make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/features` }), expect: all(200) },
  'PUT /api/v1/territories/{id}/features': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/features`, payload: { enabledFlags: [...TERRITORY_FEATURE_FLAGS] } }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'DELETE /api/v1/users/me/interests/{tag}': { make: async (w) => ({ owner: await resident(w), url: '/api/v1/users/me/interests/surf' }), expect: all(204) },
  'GET /api/v1/admin/system-config/{key}': {
    make: async (w) => ({ owner: await resident(w), url: '/api/v1/admin/system-config/Media:UnattachedRetentionHours' }),
    expect: adminOnly(200),
  },
  'POST /api/v1/admin/work-items/{workItemId}/complete': {
    make: async (w) => {
      const { owner, workItemId } = await identityDocument(w);
      return { owner, url: `/api/v1/admin/work-items/${workItemId}/complete`, payload: { outcome: 'REJECTED' } };
    },
    expect: adminOnly(200),
  },
  'POST /api/v1/admin/verifications/identity/{workItemId}/decide': {
    make: async (w) => {
      const { owner, workItemId } = await identityDocument(w);
      return { owner, url: `/api/v1/admin/verifications/identity/${workItemId}/decide`, payload: { outcome: 'REJECTED' } };
    },
    expect: adminOnly(200),
  },
  'GET /api/v1/admin/jobs/{queue}/failed': {
    make: async (w) => ({ owner: await resident(w), url: '/api/v1/admin/jobs/auth-cleanup/failed' }),
    expect: adminOnly(200),
  },
  'POST /api/v1/admin/jobs/{queue}/{jobId}/retry': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/admin/jobs/auth-cleanup/${newId()}/retry` }),
    expect: adminOnly(404),
  },
  'POST /api/v1/territories/{territoryId}/enter': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/enter` }),
    expect: all(200),
  },
  'GET /api/v1/memberships/{territoryId}/me': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/memberships/${T(w)}/me` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 404, curator: 200, admin: 404 },
  },
  'POST /api/v1/memberships/{territoryId}/become-resident': {
    make: async (w) => ({ owner: await newVisitor(w.t, w.territory), url: `/api/v1/memberships/${T(w)}/become-resident` }),
    expect: { owner: 201, member: 409, visitor: 201, outsider: 409, curator: 409, admin: 201 },
  },
  'POST /api/v1/memberships/{territoryId}/verify-residency/geo': {
    make: async (w) => ({
      owner: await newResident(w.t, w.territory),
      url: `/api/v1/memberships/${T(w)}/verify-residency/geo`,
      payload: { latitude: w.territory.latitude, longitude: w.territory.longitude },
    }),
    expect: { owner: 200, member: 200, visitor: 403, outsider: 403, curator: 200, admin: 403 },
  },
  'POST /api/v1/memberships/{territoryId}/verify-residency/document': {
    make: async (w) => {
      const { owner, evidenceId } = await residencyDocument(w);
      return { owner, url: `/api/v1/memberships/${T(w)}/verify-residency/document`, payload: { evidenceId } };
    },
    expect: { owner: 200, member: 404, visitor: 403, outsider: 403, curator: 404, admin: 403 },
  },
  'POST /api/v1/memberships/{territoryId}/verify-residency/document/upload': {
    make: async (w) => ({
      owner: await newResident(w.t, w.territory),
      url: `/api/v1/memberships/${T(w)}/verify-residency/document/upload`,
      multipart: multipartBody([{ field: 'file', fileName: 'bill.pdf', contentType: 'application/pdf', bytes: TINY_PDF }]),
    }),
    expect: { owner: 201, member: 201, visitor: 403, outsider: 403, curator: 201, admin: 403 },
  },
  'POST /api/v1/territories/{territoryId}/join-requests': {
    make: async (w) => ({
      owner: await newVisitor(w.t, w.territory),
      url: `/api/v1/territories/${T(w)}/join-requests`,
      payload: { recipientUserIds: [(await resident(w)).id] },
    }),
    expect: { owner: 201, member: 409, visitor: 201, outsider: 409, curator: 409, admin: 201 },
  },
  'GET /api/v1/join-requests/{id}': {
    make: async (w) => {
      const { owner, id } = await joinRequest(w);
      return { owner, url: `/api/v1/join-requests/${id}` };
    },
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 200, admin: 200 },
  },
  'POST /api/v1/join-requests/{id}/approve': {
    make: async (w) => {
      const { owner, id } = await joinRequest(w);
      return { owner, url: `/api/v1/join-requests/${id}/approve` };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/join-requests/{id}/reject': {
    make: async (w) => {
      const { owner, id } = await joinRequest(w);
      return { owner, url: `/api/v1/join-requests/${id}/reject` };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/join-requests/{id}/cancel': {
    make: async (w) => {
      const { owner, id } = await joinRequest(w);
      return { owner, url: `/api/v1/join-requests/${id}/cancel` };
    },
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'GET /api/v1/territories/{territoryId}/work-items': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/work-items` }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/territories/{territoryId}/work-items/paged': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/work-items/paged` }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/work-items/{workItemId}/complete': {
    make: async (w) => {
      const { owner, workItemId } = await residencyDocument(w);
      return { owner, url: `/api/v1/territories/${T(w)}/work-items/${workItemId}/complete`, payload: { outcome: 'REJECTED' } };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/verification/residency/{workItemId}/decide': {
    make: async (w) => {
      const { owner, workItemId } = await residencyDocument(w);
      return { owner, url: `/api/v1/territories/${T(w)}/verification/residency/${workItemId}/decide`, payload: { outcome: 'REJECTED' } };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/admin/evidences/{evidenceId}/download': {
    make: async (w) => {
      const { owner, evidenceId } = await identityDocument(w);
      return { owner, url: `/api/v1/admin/evidences/${evidenceId}/download` };
    },
    expect: adminOnly(200),
  },
  'GET /api/v1/territories/{territoryId}/evidences/{evidenceId}/download': {
    make: async (w) => {
      const { owner, evidenceId } = await residencyDocument(w);
      return { owner, url: `/api/v1/territories/${T(w)}/evidences/${evidenceId}/download` };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/notifications/{id}/read': {
    make: async (w) => {
      const { owner, id } = await notification(w);
      return { owner, url: `/api/v1/notifications/${id}/read` };
    },
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'GET /api/v1/media/{id}': {
    make: async (w) => {
      const { owner, id } = await media(w);
      return { owner, url: `/api/v1/media/${id}` };
    },
    expect: { owner: 200, member: 404, visitor: 404, outsider: 404, curator: 404, admin: 404 },
  },
  'DELETE /api/v1/media/{id}': {
    make: async (w) => {
      const { owner, id } = await media(w);
      return { owner, url: `/api/v1/media/${id}` };
    },
    expect: { owner: 204, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'GET /api/v1/territories/{territoryId}/media-config': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/media-config` }),
    expect: all(200),
  },
  'PUT /api/v1/territories/{territoryId}/media-config': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/media-config`, payload: { posts: { imagesEnabled: true } } }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/users/{userId}/block': {
    make: async (w) => blockCall(w, '/api/v1/users/{userId}/block'),
    expect: { owner: 400, member: 204, visitor: 204, outsider: 204, curator: 204, admin: 204 },
  },
  'DELETE /api/v1/users/{userId}/block': {
    make: async (w) => blockCall(w, '/api/v1/users/{userId}/block'),
    expect: { owner: 400, member: 204, visitor: 204, outsider: 204, curator: 204, admin: 204 },
  },
  'POST /api/v1/blocks/users/{userId}': {
    make: async (w) => blockCall(w, '/api/v1/blocks/users/{userId}'),
    expect: { owner: 400, member: 204, visitor: 204, outsider: 204, curator: 204, admin: 204 },
  },
  'DELETE /api/v1/blocks/users/{userId}': {
    make: async (w) => blockCall(w, '/api/v1/blocks/users/{userId}'),
    expect: { owner: 400, member: 204, visitor: 204, outsider: 204, curator: 204, admin: 204 },
  },
  'GET /api/v1/events/{eventId}': { make: async (w) => eventCall(w, ''), expect: all(200) },
  'POST /api/v1/events/{eventId}/interest': { make: async (w) => eventCall(w, '/interest'), expect: all(200) },
  'POST /api/v1/events/{eventId}/confirm': { make: async (w) => eventCall(w, '/confirm'), expect: all(200) },
  'POST /api/v1/events/{eventId}/cancel': {
    make: async (w) => eventCall(w, '/cancel'),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'PATCH /api/v1/alerts/{alertId}/validation': {
    make: async (w) => {
      const { owner, id } = await alert(w);
      return { owner, url: `/api/v1/alerts/${id}/validation`, payload: { validated: true } };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/feed/{id}': { make: async (w) => postCall(w, ''), expect: all(200) },
  'PATCH /api/v1/feed/{id}': {
    make: async (w) => postCall(w, '', { title: 'Edited' }),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'DELETE /api/v1/feed/{id}': {
    make: async (w) => postCall(w, ''),
    expect: { owner: 204, member: 403, visitor: 403, outsider: 403, curator: 204, admin: 204 },
  },
  'POST /api/v1/feed/{id}/likes': { make: async (w) => postCall(w, '/likes'), expect: all(200) },
  'DELETE /api/v1/feed/{id}/likes': { make: async (w) => postCall(w, '/likes'), expect: all(204) },
  'POST /api/v1/feed/{id}/comments': { make: async (w) => postCall(w, '/comments', { content: 'Nice' }), expect: all(201) },
  'GET /api/v1/feed/{id}/comments': { make: async (w) => postCall(w, '/comments'), expect: all(200) },
  'POST /api/v1/feed/{id}/shares': { make: async (w) => postCall(w, '/shares'), expect: all(201) },
  'PATCH /api/v1/map/entities/{entityId}/validation': {
    make: async (w) => mapCall(w, '/validation', { validated: true }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/map/entities/{entityId}/relations': {
    make: async (w) => mapCall(w, '/relations'),
    expect: { owner: 201, member: 201, visitor: 403, outsider: 403, curator: 201, admin: 403 },
  },
  'POST /api/v1/map/entities/{entityId}/confirmations': {
    make: async (w) => mapCall(w, `/confirmations?territoryId=${T(w)}`),
    expect: { owner: 201, member: 201, visitor: 201, outsider: 403, curator: 201, admin: 403 },
  },
  'GET /api/v1/assets/{assetId}': { make: async (w) => assetCall(w, ''), expect: all(200) },
  'PATCH /api/v1/assets/{assetId}': {
    make: async (w) => assetCall(w, '', { name: 'Renamed square' }),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/assets/{assetId}/validate': {
    make: async (w) => assetCall(w, '/validate'),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 403 },
  },
  'POST /api/v1/assets/{assetId}/curate': {
    make: async (w) => assetCall(w, '/curate', { outcome: 'APPROVED' }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/assets/{assetId}/archive': {
    make: async (w) => assetCall(w, '/archive'),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/territories/{territoryId}/natural-assets': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/natural-assets` }),
    expect: all(200),
  },
  'POST /api/v1/territories/{territoryId}/natural-assets': {
    make: async (w) => ({
      owner: await resident(w),
      url: `/api/v1/territories/${T(w)}/natural-assets`,
      payload: { territoryId: T(w), type: 'WATERFALL', name: 'Falls', latitude: w.territory.latitude, longitude: w.territory.longitude },
    }),
    expect: { owner: 201, member: 201, visitor: 403, outsider: 403, curator: 201, admin: 201 },
  },
  'POST /api/v1/territories/{territoryId}/natural-assets/{id}/publish': {
    make: async (w) => {
      const { owner, id } = await naturalAsset(w);
      return { owner, url: `/api/v1/territories/${T(w)}/natural-assets/${id}/publish` };
    },
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/territories/{territoryId}/chat/channels': {
    make: async (w) => ({ owner: await chatOwner(w), url: `/api/v1/territories/${T(w)}/chat/channels` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 403 },
  },
  'GET /api/v1/territories/{territoryId}/chat/groups': {
    make: async (w) => ({ owner: await chatOwner(w), url: `/api/v1/territories/${T(w)}/chat/groups` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/chat/groups': {
    make: async (w) => ({ owner: await chatOwner(w), url: `/api/v1/territories/${T(w)}/chat/groups`, payload: { name: 'New group' } }),
    // Identity-Verified residents only (the other callers' identities are Unverified).
    expect: { owner: 201, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 403 },
  },
  'POST /api/v1/territories/{territoryId}/chat/groups/{groupId}/approve': {
    make: async (w) => chatGroupAction(w, 'PENDING_APPROVAL', 'approve'),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/chat/groups/{groupId}/lock': {
    make: async (w) => chatGroupAction(w, 'ACTIVE', 'lock'),
    expect: adminOnly(200),
  },
  'POST /api/v1/territories/{territoryId}/chat/groups/{groupId}/unlock': {
    make: async (w) => chatGroupAction(w, 'LOCKED', 'unlock'),
    expect: adminOnly(200),
  },
  'POST /api/v1/territories/{territoryId}/chat/groups/{groupId}/disable': {
    make: async (w) => chatGroupAction(w, 'ACTIVE', 'disable'),
    expect: adminOnly(200),
  },
  'GET /api/v1/chat/conversations/{conversationId}': {
    make: async (w) => chatCall(w, ''),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/chat/conversations/{conversationId}/messages': {
    make: async (w) => chatCall(w, '/messages'),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 200 },
  },
  'POST /api/v1/chat/conversations/{conversationId}/messages': {
    make: async (w) => chatCall(w, '/messages', { text: 'Hello group' }),
    expect: { owner: 201, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 201 },
  },
  'GET /api/v1/chat/conversations/{conversationId}/participants': {
    make: async (w) => chatCall(w, '/participants'),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/chat/conversations/{conversationId}/participants': {
    make: async (w) => chatCall(w, '/participants', { userId: (await newVisitor(w.t, w.territory)).id }),
    expect: { owner: 204, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 204 },
  },
  'DELETE /api/v1/chat/conversations/{conversationId}/participants/{userId}': {
    make: async (w) => {
      const { owner, id } = await chatGroup(w);
      const participant = await newVisitor(w.t, w.territory);
      await w.t.sql(`insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_seq) values ($1, $2, 'MEMBER', now(), 0)`, [
        id,
        participant.id,
      ]);
      return { owner, url: `/api/v1/chat/conversations/${id}/participants/${participant.id}` };
    },
    expect: { owner: 204, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 204 },
  },
  'POST /api/v1/chat/conversations/{conversationId}/read': {
    make: async (w) => chatCall(w, '/read', {}),
    expect: { owner: 204, member: 403, visitor: 403, outsider: 403, curator: 403, admin: 204 },
  },
  // Moderation: anyone reports (not their own post, not themselves).
  'POST /api/v1/reports/posts/{postId}': {
    make: async (w) => {
      const { owner, id } = await post(w);
      return { owner, url: `/api/v1/reports/posts/${id}`, payload: { reason: 'Spam' } };
    },
    expect: { owner: 400, member: 201, visitor: 201, outsider: 201, curator: 201, admin: 201 },
  },
  'POST /api/v1/reports/users/{userId}': {
    make: async (w) => {
      const owner = await resident(w);
      return { owner, url: `/api/v1/reports/users/${owner.id}`, payload: { reason: 'Rude', territoryId: T(w) } };
    },
    expect: { owner: 400, member: 201, visitor: 201, outsider: 201, curator: 201, admin: 201 },
  },
  'GET /api/v1/territories/{territoryId}/moderation-rules': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/moderation-rules` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/moderation-rules': {
    make: async (w) => ({
      owner: await resident(w),
      url: `/api/v1/territories/${T(w)}/moderation-rules`,
      payload: { name: 'Words', ruleType: 'ProhibitedWords', config: { words: ['scam'] } },
    }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 201, admin: 201 },
  },
  'PATCH /api/v1/territories/{territoryId}/moderation-rules/{ruleId}': {
    make: async (w) => moderationRuleCall(w, { isActive: false }),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'DELETE /api/v1/territories/{territoryId}/moderation-rules/{ruleId}': {
    make: async (w) => moderationRuleCall(w),
    expect: { owner: 403, member: 403, visitor: 403, outsider: 403, curator: 204, admin: 204 },
  },
  // Governance: the owner is the voting's creator (a verified resident).
  'POST /api/v1/territories/{territoryId}/votings': {
    make: async (w) => ({
      owner: await resident(w),
      url: `/api/v1/territories/${T(w)}/votings`,
      payload: { type: 'ThemePrioritization', title: 'First?', options: ['Parks', 'Lights'], visibility: 'AllMembers' },
    }),
    expect: { owner: 201, member: 201, visitor: 403, outsider: 403, curator: 201, admin: 201 },
  },
  'GET /api/v1/territories/{territoryId}/votings': {
    make: async (w) => ({ owner: await resident(w), url: `/api/v1/territories/${T(w)}/votings` }),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/territories/{territoryId}/votings/{votingId}': {
    make: async (w) => votingCall(w, 'Open', ''),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/votings/{votingId}/open': {
    make: async (w) => votingCall(w, 'Draft', '/open'),
    // A Draft is invisible (404) to all but its creator and curators.
    expect: { owner: 200, member: 404, visitor: 404, outsider: 403, curator: 200, admin: 200 },
  },
  'POST /api/v1/territories/{territoryId}/votings/{votingId}/vote': {
    make: async (w) => votingCall(w, 'Open', '/vote', { selectedOption: 'Parks' }),
    expect: { owner: 204, member: 204, visitor: 204, outsider: 403, curator: 204, admin: 204 },
  },
  'POST /api/v1/territories/{territoryId}/votings/{votingId}/close': {
    make: async (w) => votingCall(w, 'Open', '/close'),
    expect: { owner: 200, member: 403, visitor: 403, outsider: 403, curator: 200, admin: 200 },
  },
  'GET /api/v1/territories/{territoryId}/votings/{votingId}/results': {
    make: async (w) => votingCall(w, 'Rejected', '/results'),
    expect: { owner: 200, member: 200, visitor: 200, outsider: 403, curator: 200, admin: 200 },
  },
};

async function moderationRuleCall(w: World, payload?: Record<string, unknown>): Promise<Call> {
  const owner = await resident(w);
  const id = newId();
  await w.t.sql(
    `insert into territory_moderation_rule (id, created_at_utc, updated_at_utc, territory_id, rule_type, name, config, is_active)
     values ($1, now(), now(), $2, 'ProhibitedWords', 'Words', '{"words":["scam"]}', true)`,
    [id, T(w)],
  );
  return { owner, url: `/api/v1/territories/${T(w)}/moderation-rules/${id}`, payload };
}
async function votingCall(w: World, status: string, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const owner = await resident(w);
  const id = newId();
  await w.t.sql(
    `insert into voting (id, created_at_utc, territory_id, created_by_user_id, type, title, options, visibility, status, payload, results)
     values ($1, now(), $2, $3, 'ThemePrioritization', 'First?', '{Parks,Lights}', 'AllMembers', $4, '{}', $5)`,
    [id, T(w), owner.id, status, status === 'Rejected' ? '{"Parks":0,"Lights":0}' : null],
  );
  return { owner, url: `/api/v1/territories/${T(w)}/votings/${id}${suffix}`, payload };
}

async function blockCall(w: World, path: string): Promise<Call> {
  const owner = await newUser(w.t);
  return { owner, url: path.replace('{userId}', owner.id) };
}
async function eventCall(w: World, suffix: string): Promise<Call> {
  const { owner, id } = await event(w);
  return { owner, url: `/api/v1/events/${id}${suffix}` };
}
async function postCall(w: World, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, id } = await post(w);
  return { owner, url: `/api/v1/feed/${id}${suffix}`, payload };
}
async function mapCall(w: World, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, id } = await mapEntity(w);
  return { owner, url: `/api/v1/map/entities/${id}${suffix}`, payload };
}
async function assetCall(w: World, suffix: string, payload?: Record<string, unknown>): Promise<Call> {
  const { owner, id } = await asset(w);
  return { owner, url: `/api/v1/assets/${id}${suffix}`, payload };
}

// ---- the operations of the document that name something in their path

const doc = openApiDocument() as unknown as { paths: Record<string, Record<string, { security?: unknown[] }>> };
const OPERATIONS = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method) && path.includes('{'))
    .map((method) => `${method.toUpperCase()} ${path}`),
);

/** Written by the jobs (the outbox's deliveries of what `make` caused), not by the request: a refusal writes the rest. */
const WORKER_TABLES = ['notification'];

let world: World;
beforeAll(async () => {
  const t = await createTestApp();
  const territory = await newTerritory(t, { flags: [...TERRITORY_FEATURE_FLAGS] });
  const elsewhere = await newTerritory(t, { flags: [...TERRITORY_FEATURE_FLAGS] });
  world = { t, territory, elsewhere };
  await seedSystemConfig(t.deps.orm.em.fork() as EntityManager);
});
afterAll(() => world?.t.close());

describe('authorization matrix', () => {
  it('every operation that names something in its path has a row', () => {
    expect(OPERATIONS.filter((op) => !MATRIX[op])).toEqual([]);
    expect(Object.keys(MATRIX).filter((op) => !OPERATIONS.includes(op))).toEqual([]);
  });

  it.each(Object.keys(MATRIX))('%s answers each caller as written', async (op) => {
    const row = MATRIX[op]!;
    const method = op.split(' ')[0]!;
    const observed = {} as Expected;
    const callers = await callersFor(world);
    for (const caller of CALLERS) {
      const call = await row.make(world);
      const who = caller === 'owner' ? call.owner : callers[caller];
      const headers: Record<string, string> = call.client ? { authorization: `Bearer ${call.client}`, 'x-user-token': who.token } : { ...who.headers };
      let payload: string | Buffer | Record<string, unknown> | undefined = call.payload;
      if (call.multipart) {
        Object.assign(headers, call.multipart.headers);
        payload = call.multipart.payload;
      }
      const before = await everyTableCount(world.t, WORKER_TABLES);
      const res = await world.t.app.inject({ method: method as 'GET', url: call.url, headers, ...(payload !== undefined ? { payload } : {}) });
      observed[caller] = res.statusCode;
      // A refusal writes nothing.
      if (res.statusCode >= 400) expect(await everyTableCount(world.t, WORKER_TABLES), `${caller}: ${res.statusCode}`).toEqual(before);
    }
    if (process.env.MATRIX_RECORD) console.log(`MATRIX ${op} ${JSON.stringify(observed)}`);
    expect(observed).toEqual(row.expect);
  });
});
