import { execSql, runHotRead, runSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { newId } from '../../platform/ids.js';
import { forbidden } from '../../platform/problems.js';
import { hasPermission, type ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { feeQuery, type PlatformFeeRow, territoryFeesQuery } from './platform-fees.queries.js';
import type { PlatformFeeOutput, PutPlatformFeeInput } from './platform-fees.schemas.js';

const MARKETPLACE = 'MARKETPLACEENABLED' as const;

const toOutput = (r: PlatformFeeRow): PlatformFeeOutput => ({
  id: r.id,
  territoryId: r.territory_id,
  itemType: r.item_type,
  feeMode: r.fee_mode,
  feeBasisPoints: r.fee_basis_points,
  feeFixedInCents: r.fee_fixed_in_cents === null ? null : Number(r.fee_fixed_in_cents),
  isActive: r.is_active,
  createdAtUtc: r.created_at_utc,
  updatedAtUtc: r.updated_at_utc,
});

/** Members of the territory (and its curators, system admins and financial managers) read its fee rules. */
export async function getPlatformFees(ctx: ServiceContext, input: { territoryId: string }) {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  if (!access.is('member', 'CURATOR') && !hasPermission(ctx.user, 'FINANCIAL_MANAGER')) {
    throw forbidden('Only members of this territory can read its platform fees.', 'NOT_MEMBER');
  }
  const rows = await runHotRead<PlatformFeeRow>(ctx, territoryFeesQuery(access.territoryId), { prepared: true });
  return { territoryId: access.territoryId, fees: rows.map(toOutput) };
}

/**
 * A curator of the territory, a SYSTEM_ADMIN or a FINANCIAL_MANAGER sets the fee of one item type: one upsert per
 * (territory, item type), audited with the values before and after.
 */
export async function putPlatformFee(ctx: ServiceContext, input: PutPlatformFeeInput): Promise<PlatformFeeOutput> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  if (!access.holds('CURATOR') && !hasPermission(ctx.user, 'FINANCIAL_MANAGER')) {
    throw forbidden('Only curators, system admins and financial managers can set platform fees.');
  }
  const { em, user } = ctx;
  const territoryId = access.territoryId;
  await em.transactional(async (tx) => {
    const current = feeQuery(territoryId, input.itemType);
    const [before] = await execSql<PlatformFeeRow>(tx, `${current.sql} for update`, current.params);
    const now = ctx.clock.now();
    await execSql(
      tx,
      `insert into platform_fee_config (id, created_at_utc, territory_id, item_type, fee_mode, fee_basis_points, fee_fixed_in_cents, is_active,
                                        updated_by_user_id, updated_at_utc)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (territory_id, item_type) do update set fee_mode = excluded.fee_mode, fee_basis_points = excluded.fee_basis_points,
         fee_fixed_in_cents = excluded.fee_fixed_in_cents, is_active = excluded.is_active, updated_by_user_id = excluded.updated_by_user_id,
         updated_at_utc = excluded.updated_at_utc`,
      [newId(), now, territoryId, input.itemType, input.feeMode, input.feeBasisPoints ?? null, input.feeFixedInCents ?? null, input.isActive, user.id, now],
    );
    audit(tx, {
      actorUserId: user.id,
      action: 'platform-fee.updated',
      subjectType: 'PlatformFeeConfig',
      subjectId: `${territoryId}:${input.itemType}`,
      territoryId,
      data: {
        before: before ? toOutput(before) : null,
        after: {
          feeMode: input.feeMode,
          feeBasisPoints: input.feeBasisPoints ?? null,
          feeFixedInCents: input.feeFixedInCents ?? null,
          isActive: input.isActive,
        },
      },
    });
    await tx.flush();
  });
  const [row] = await runSql<PlatformFeeRow>(em, feeQuery(territoryId, input.itemType));
  return toOutput(row!);
}
