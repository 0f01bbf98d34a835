import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray, runHotRead, runSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { PAYMENT_METHODS, type PaymentMethod } from '../../entities/checkout.entity.js';
import { FISCAL_PACKS, type FiscalPackId } from '../../entities/fiscal.entity.js';
import { newId } from '../../platform/ids.js';
import { badRequest, forbidden } from '../../platform/problems.js';
import type { PublicServiceContext, ServiceContext } from '../../platform/service-context.js';
import { requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { FISCAL_LOCK_KEY, fiscalPackQuery, type FiscalPackRow, paymentMethodsQuery, type PaymentMethodsRow } from './fiscal.queries.js';
import type { FiscalPackOutput, PaymentMethodsOutput, PutFiscalPackInput, PutPaymentMethodsInput, TerritoryFiscalPackOutput } from './fiscal.schemas.js';

const needsPix = (packId: FiscalPackId) => FISCAL_PACKS.some((p) => p.id === packId && (p.capabilities as readonly string[]).includes('pix'));

/** The packs this code implements; public. */
export function listFiscalPacks(_ctx: PublicServiceContext): FiscalPackOutput[] {
  return FISCAL_PACKS.map((p) => ({ id: p.id, countryCode: p.countryCode, displayName: p.displayName, capabilities: [...p.capabilities] }));
}

const packOutput = (territoryId: string, row: FiscalPackRow | undefined): TerritoryFiscalPackOutput =>
  row
    ? {
        territoryId,
        packId: row.pack_id,
        status: row.status,
        municipalityIbge: row.municipality_ibge,
        activatedByUserId: row.activated_by_user_id,
        activatedAtUtc: row.activated_at_utc,
        isLegacyDefault: false,
      }
    : { territoryId, packId: null, status: 'Off', municipalityIbge: null, activatedByUserId: null, activatedAtUtc: null, isLegacyDefault: true };

const methodsOutput = (territoryId: string, row: PaymentMethodsRow | undefined): PaymentMethodsOutput => ({
  territoryId,
  // A territory that never configured its methods accepts all of them.
  methods: row ? PAYMENT_METHODS.filter((m) => row.methods.includes(m)) : [...PAYMENT_METHODS],
  updatedAtUtc: row ? row.updated_at_utc : null,
});

/** Members of the territory read its fiscal configuration (curators and system admins too). */
async function requireReader(ctx: ServiceContext, territoryId: string): Promise<TerritoryAccess> {
  const access = await requireTerritory(ctx, territoryId);
  if (!access.is('member', 'CURATOR')) throw forbidden('Only members of this territory can read its fiscal configuration.', 'NOT_MEMBER');
  return access;
}

/** Only a SYSTEM_ADMIN changes a territory's fiscal configuration. */
async function requireAdmin(ctx: ServiceContext, territoryId: string): Promise<TerritoryAccess> {
  const access = await requireTerritory(ctx, territoryId);
  if (!access.isSystemAdmin) throw forbidden("Only system admins can change a territory's fiscal configuration.");
  return access;
}

/**
 * Serialises the fiscal writes of one territory (pack and methods), so the PIX rule is checked against what the
 * other write committed: two concurrent PUTs can never leave a pix pack Active without PIX.
 */
async function lockFiscal(tx: EntityManager, territoryId: string) {
  await execSql(tx, `select pg_advisory_xact_lock(${FISCAL_LOCK_KEY})`, [territoryId]);
  const [pack] = await runSql<FiscalPackRow>(tx, fiscalPackQuery(territoryId));
  const [methods] = await runSql<PaymentMethodsRow>(tx, paymentMethodsQuery(territoryId));
  return { pack, methods };
}

export async function getFiscalPack(ctx: ServiceContext, input: { territoryId: string }): Promise<TerritoryFiscalPackOutput> {
  const access = await requireReader(ctx, input.territoryId);
  const [row] = await runHotRead<FiscalPackRow>(ctx, fiscalPackQuery(access.territoryId), { prepared: true });
  return packOutput(access.territoryId, row);
}

/**
 * Binds a pack to the territory (one binding, replaced in place). Activating a pack with the `pix` capability needs
 * PIX among the territory's payment methods (400 PIX_REQUIRED_BY_FISCAL_PACK). `activatedBy/At` are set when the pack
 * becomes Active (or another pack is activated), kept while it stays Active and cleared when it is turned Off.
 * Audited with the binding before and after.
 */
export async function putFiscalPack(ctx: ServiceContext, input: PutFiscalPackInput): Promise<TerritoryFiscalPackOutput> {
  const access = await requireAdmin(ctx, input.territoryId);
  const territoryId = access.territoryId;
  const { em, user } = ctx;
  await em.transactional(async (tx) => {
    const { pack: before, methods } = await lockFiscal(tx, territoryId);
    const accepted = methodsOutput(territoryId, methods).methods;
    if (input.status === 'Active' && needsPix(input.packId) && !accepted.includes('PIX')) {
      throw badRequest(
        `The fiscal pack ${input.packId} has the pix capability: enable PIX among the territory's payment methods before activating it (enabled: ${accepted.join(', ')}).`,
        'PIX_REQUIRED_BY_FISCAL_PACK',
      );
    }
    const now = ctx.clock.now();
    const stillActive = before?.status === 'Active' && before.pack_id === input.packId && input.status === 'Active';
    const activatedBy = input.status !== 'Active' ? null : stillActive ? before.activated_by_user_id : user.id;
    const activatedAt = input.status !== 'Active' ? null : stillActive ? before.activated_at_utc : now;
    await execSql(
      tx,
      `insert into territory_fiscal_pack (id, created_at_utc, territory_id, pack_id, status, municipality_ibge, activated_by_user_id, activated_at_utc,
                                          updated_by_user_id, updated_at_utc)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (territory_id) do update set pack_id = excluded.pack_id, status = excluded.status, municipality_ibge = excluded.municipality_ibge,
         activated_by_user_id = excluded.activated_by_user_id, activated_at_utc = excluded.activated_at_utc,
         updated_by_user_id = excluded.updated_by_user_id, updated_at_utc = excluded.updated_at_utc`,
      [newId(), now, territoryId, input.packId, input.status, input.municipalityIbge ?? null, activatedBy, activatedAt, user.id, now],
    );
    audit(tx, {
      actorUserId: user.id,
      action: 'fiscal-pack.updated',
      subjectType: 'TerritoryFiscalPack',
      subjectId: territoryId,
      territoryId,
      data: {
        before: before ? packOutput(territoryId, before) : null,
        after: { packId: input.packId, status: input.status, municipalityIbge: input.municipalityIbge ?? null },
      },
    });
    await tx.flush();
  });
  const [row] = await runSql<FiscalPackRow>(em, fiscalPackQuery(territoryId));
  return packOutput(territoryId, row);
}

export async function getPaymentMethods(ctx: ServiceContext, input: { territoryId: string }): Promise<PaymentMethodsOutput> {
  const access = await requireReader(ctx, input.territoryId);
  const [row] = await runHotRead<PaymentMethodsRow>(ctx, paymentMethodsQuery(access.territoryId), { prepared: true });
  return methodsOutput(access.territoryId, row);
}

/**
 * Sets the methods the territory accepts at checkout (at least one; repeats ignored). Removing PIX while a pack with
 * the `pix` capability is Active: 400 PIX_REQUIRED_BY_FISCAL_PACK. Audited with the methods before and after.
 */
export async function putPaymentMethods(ctx: ServiceContext, input: PutPaymentMethodsInput): Promise<PaymentMethodsOutput> {
  const access = await requireAdmin(ctx, input.territoryId);
  const territoryId = access.territoryId;
  const methods: PaymentMethod[] = PAYMENT_METHODS.filter((m) => input.methods.includes(m));
  const { em, user } = ctx;
  await em.transactional(async (tx) => {
    const { pack, methods: before } = await lockFiscal(tx, territoryId);
    if (!methods.includes('PIX') && pack?.status === 'Active' && needsPix(pack.pack_id)) {
      throw badRequest(
        `PIX cannot be removed: the territory's active fiscal pack ${pack.pack_id} has the pix capability (turn the pack Off first).`,
        'PIX_REQUIRED_BY_FISCAL_PACK',
      );
    }
    const now = ctx.clock.now();
    await execSql(
      tx,
      `insert into territory_payment_methods (id, created_at_utc, territory_id, methods, updated_by_user_id, updated_at_utc)
       values (?, ?, ?, ?::text[], ?, ?)
       on conflict (territory_id) do update set methods = excluded.methods, updated_by_user_id = excluded.updated_by_user_id,
         updated_at_utc = excluded.updated_at_utc`,
      [newId(), now, territoryId, pgArray(methods), user.id, now],
    );
    audit(tx, {
      actorUserId: user.id,
      action: 'payment-methods.updated',
      subjectType: 'TerritoryPaymentMethods',
      subjectId: territoryId,
      territoryId,
      data: { before: before ? before.methods : null, after: methods },
    });
    await tx.flush();
  });
  const [row] = await runSql<PaymentMethodsRow>(em, paymentMethodsQuery(territoryId));
  return methodsOutput(territoryId, row);
}
