import { z } from 'zod';
import { ITEM_TYPES } from '../../entities/item.entity.js';
import { FEE_MODES } from '../../entities/platform-fee.entity.js';
import { zId } from '../../platform/ids.js';
import { lenientEnum } from '../../platform/enums.js';

/** A fixed fee bound (cents per unit), so fees stay exact integers. */
export const FEE_FIXED_MAX_IN_CENTS = 100_000_000;

export const platformFeeOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    itemType: z.enum(ITEM_TYPES),
    feeMode: z.enum(FEE_MODES),
    /** PERCENTAGE: basis points of the line subtotal (100 = 1%). */
    feeBasisPoints: z.number().int().nullable(),
    /** FIXED: cents per unit. */
    feeFixedInCents: z.number().int().nullable(),
    isActive: z.boolean(),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'PlatformFee' });
export type PlatformFeeOutput = z.infer<typeof platformFeeOutput>;

export const platformFeesOutput = z.object({ territoryId: z.uuid(), fees: z.array(platformFeeOutput) }).meta({ id: 'PlatformFees' });

export const territoryIdInput = z.object({ territoryId: zId });

export const putPlatformFeeInput = z
  .object({
    territoryId: zId,
    itemType: lenientEnum(ITEM_TYPES),
    feeMode: lenientEnum(FEE_MODES),
    feeBasisPoints: z.number().int().min(0).max(10_000).nullish(),
    feeFixedInCents: z.number().int().min(0).max(FEE_FIXED_MAX_IN_CENTS).nullish(),
    isActive: z.boolean().default(true),
  })
  .superRefine((v, ctx) => {
    const [needed, other] = v.feeMode === 'PERCENTAGE' ? (['feeBasisPoints', 'feeFixedInCents'] as const) : (['feeFixedInCents', 'feeBasisPoints'] as const);
    if (v[needed] === undefined || v[needed] === null) ctx.addIssue({ code: 'custom', path: [needed], message: `required when feeMode is ${v.feeMode}` });
    if (v[other] !== undefined && v[other] !== null) ctx.addIssue({ code: 'custom', path: [other], message: `not allowed when feeMode is ${v.feeMode}` });
  });
export type PutPlatformFeeInput = z.infer<typeof putPlatformFeeInput>;
