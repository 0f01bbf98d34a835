import { LockMode } from '@mikro-orm/postgresql';
import { execSql, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { Store } from '../../entities/store.entity.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { newId } from '../../platform/ids.js';
import { forbidden, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { storeByIdQuery, type StoreRow, territoryStoresQuery, visibleContact } from './stores.queries.js';
import type { ListStoresInput, StoreOutput, UpdateStoreInput, UpsertStoreInput } from './stores.schemas.js';

const MARKETPLACE = 'MARKETPLACEENABLED' as const;

/**
 * Who keeps a store (spec Marketplace: stores and items are for verified residents; curators manage others' stores),
 * checked on opening it and on every later edit of it or its items.
 */
export const STORE_KEEPERS = ['verifiedResident', 'CURATOR'] as const;
/** The refusal of a caller who is not (any more) one of `STORE_KEEPERS`, for `what` they tried. */
export const notStoreKeeper = (what: string) => ({
  message: `Only verified residents or curators of this territory can ${what}.`,
  code: 'NOT_VERIFIED_RESIDENT' as const,
});

/** The owner and the territory's curators (SYSTEM_ADMIN holds every capability) manage a store and see its contact. */
const manages = (row: StoreRow, access: TerritoryAccess) => row.owner_user_id === access.caller?.id || access.holds('CURATOR');

/** DESIGN 13: with the `none` payment provider every cart line becomes an inquiry, so no store takes payments. */
function toOutput(row: StoreRow, access: TerritoryAccess, paymentsOn: boolean): StoreOutput {
  return {
    id: row.id,
    territoryId: row.territory_id,
    ownerUserId: row.owner_user_id,
    displayName: row.display_name,
    description: row.description,
    contactVisibility: row.contact_visibility,
    contact: visibleContact(row, manages(row, access)),
    status: row.status,
    paymentsEnabled: paymentsOn && row.payments_enabled,
    createdAtUtc: row.created_at_utc,
    updatedAtUtc: row.updated_at_utc,
  };
}

const paymentsOn = (ctx: ServiceContext) => ctx.config.payments.provider !== 'none';

async function loadRow(ctx: ServiceContext, storeId: string): Promise<StoreRow> {
  const [row] = await runHotRead<StoreRow>(ctx, storeByIdQuery(storeId), { prepared: true });
  if (!row) throw notFound('Store');
  return row;
}

/**
 * Opens the caller's store in the territory, or updates it (one per owner and territory): a verified resident or a
 * curator; anyone else 403. One `insert ... on conflict do update` statement, so concurrent first calls create one
 * store and the rest update it. `created` tells the router 201 from 200. The status is left as it is on a repeat.
 */
export async function upsertStore(ctx: ServiceContext, input: UpsertStoreInput): Promise<{ created: boolean; store: StoreOutput }> {
  const access = await requireTerritory(ctx, input.territoryId, {
    flag: MARKETPLACE,
    as: STORE_KEEPERS,
    denied: notStoreKeeper('open a store'),
  });
  const now = ctx.clock.now();
  const [row] = await execSql<{ id: string; created: boolean }>(
    ctx.em,
    `insert into store (id, created_at_utc, territory_id, owner_user_id, display_name, description, contact_visibility, contact_phone,
                        contact_email, status, payments_enabled, updated_at_utc)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'ACTIVE', true, ?)
     on conflict (territory_id, owner_user_id) do update set display_name = excluded.display_name, description = excluded.description,
       contact_visibility = excluded.contact_visibility, contact_phone = excluded.contact_phone, contact_email = excluded.contact_email,
       updated_at_utc = excluded.updated_at_utc
     returning id, (xmax = 0) as created`,
    [
      newId(),
      now,
      access.territoryId,
      ctx.user.id,
      input.displayName,
      input.description,
      input.contactVisibility,
      input.contact?.phone ?? null,
      input.contact?.email ?? null,
      now,
    ],
  );
  return { created: row!.created, store: toOutput(await loadRow(ctx, row!.id), access, paymentsOn(ctx)) };
}

export async function getStore(ctx: ServiceContext, input: { storeId: string }): Promise<StoreOutput> {
  const row = await loadRow(ctx, input.storeId);
  const access = await requireTerritory(ctx, row.territory_id, { flag: MARKETPLACE });
  return toOutput(row, access, paymentsOn(ctx));
}

/** A territory's ACTIVE stores, by name; any signed-in user (the marketplace is public where it is enabled). */
export async function listStores(ctx: ServiceContext, input: ListStoresInput): Promise<StoreOutput[]> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  const rows = await runHotRead<StoreRow>(ctx, territoryStoresQuery(access.territoryId, input.skip, input.take));
  return rows.map((r) => toOutput(r, access, paymentsOn(ctx)));
}

/** An edit that only takes the store down (any other field given, now or added later, is an edit). */
const pausesOnly = (input: UpdateStoreInput) =>
  input.status === 'PAUSED' && Object.entries(input).every(([field, value]) => field === 'storeId' || field === 'status' || value === undefined);

/**
 * The owner or a curator edits a store (status ACTIVE or PAUSED: a PAUSED store and its items leave the lists).
 * Like listing items, editing takes what opening a store takes (a verified resident, or a curator), checked now: an
 * owner who has lost it may still pause the store (taking it down, as archiving an item) and nothing else.
 * The row is locked for the edit; a status change is audited.
 */
export async function updateStore(ctx: ServiceContext, input: UpdateStoreInput): Promise<StoreOutput> {
  const { em, user } = ctx;
  const access = await em.transactional(async (tx) => {
    const store = await tx.findOne(Store, { id: input.storeId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!store) throw notFound('Store');
    const access = await requireTerritory({ ...ctx, em: tx }, store.territoryId, { flag: MARKETPLACE });
    if (store.ownerUserId !== user.id && !access.holds('CURATOR')) {
      throw forbidden('Only the owner or a curator of the territory can edit this store.', 'NOT_STORE_OWNER');
    }
    if (!access.is(...STORE_KEEPERS) && !pausesOnly(input)) {
      const refusal = notStoreKeeper('edit this store');
      throw forbidden(refusal.message, refusal.code);
    }
    const before = store.status;
    if (input.displayName !== undefined) store.displayName = input.displayName;
    if (input.description !== undefined) store.description = input.description || null;
    if (input.contactVisibility !== undefined) store.contactVisibility = input.contactVisibility;
    if (input.contact !== undefined) {
      store.contactPhone = input.contact?.phone ?? null;
      store.contactEmail = input.contact?.email ?? null;
    }
    if (input.status !== undefined) store.status = input.status;
    store.updatedAtUtc = ctx.clock.now();
    if (store.status !== before) {
      audit(tx, {
        actorUserId: user.id,
        action: 'store.status.updated',
        subjectType: 'Store',
        subjectId: store.id,
        territoryId: store.territoryId,
        data: { before, after: store.status },
      });
    }
    return access;
  });
  return toOutput(await loadRow(ctx, input.storeId), access, paymentsOn(ctx));
}

/**
 * Account deletion: the person's stores stop selling (PAUSED, payments off) and their contact details go; the stores'
 * orders and money records stay, as the law and the buyers need them.
 */
export const eraseStores: AccountEraser = async ({ em, userId, at }) => {
  await execSql(
    em,
    `update store set status = 'PAUSED', payments_enabled = false, contact_phone = null, contact_email = null, updated_at_utc = ? where owner_user_id = ?`,
    [at, userId],
  );
};
