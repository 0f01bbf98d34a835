import { z } from 'zod';
import { PAYMENT_METHODS } from '../../entities/checkout.entity.js';
import { FISCAL_CAPABILITIES, FISCAL_PACK_IDS, FISCAL_PACK_STATUSES } from '../../entities/fiscal.entity.js';
import { zId } from '../../platform/ids.js';
import { lenientEnum } from '../../platform/enums.js';

export const fiscalPackOutput = z
  .object({
    id: z.string(),
    countryCode: z.string(),
    displayName: z.string(),
    capabilities: z.array(z.enum(FISCAL_CAPABILITIES)),
  })
  .meta({ id: 'FiscalPack' });
export type FiscalPackOutput = z.infer<typeof fiscalPackOutput>;

export const territoryFiscalPackOutput = z
  .object({
    territoryId: z.uuid(),
    /** Null when no pack was ever bound (the legacy default). */
    packId: z.enum(FISCAL_PACK_IDS).nullable(),
    status: z.enum(FISCAL_PACK_STATUSES),
    municipalityIbge: z.string().nullable(),
    /** Who activated the pack and when; null while it is Off. */
    activatedByUserId: z.uuid().nullable(),
    activatedAtUtc: z.iso.datetime().nullable(),
    /** True when the territory has no binding: Off by default. */
    isLegacyDefault: z.boolean(),
  })
  .meta({ id: 'TerritoryFiscalPack' });
export type TerritoryFiscalPackOutput = z.infer<typeof territoryFiscalPackOutput>;

export const paymentMethodsOutput = z
  .object({
    territoryId: z.uuid(),
    methods: z.array(z.enum(PAYMENT_METHODS)),
    /** Null while the territory never configured its methods (all are accepted). */
    updatedAtUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'TerritoryPaymentMethods' });
export type PaymentMethodsOutput = z.infer<typeof paymentMethodsOutput>;

export const territoryIdInput = z.object({ territoryId: zId });

const trimmed = (v: unknown) => (typeof v === 'string' ? v.trim() : v);
/** Accepts any case of the status (`active`, `OFF`) and answers in the spelling of DESIGN section 13. */
const status = z.preprocess((v) => {
  const s = trimmed(v);
  return typeof s === 'string' ? (FISCAL_PACK_STATUSES.find((x) => x.toLowerCase() === s.toLowerCase()) ?? s) : s;
}, z.enum(FISCAL_PACK_STATUSES));

export const putFiscalPackInput = z.object({
  territoryId: zId,
  packId: z.preprocess(trimmed, z.enum(FISCAL_PACK_IDS)),
  status,
  /** The IBGE code of the municipality: 7 digits. */
  municipalityIbge: z.preprocess(trimmed, z.string().regex(/^[0-9]{7}$/, 'must be 7 digits (the IBGE municipality code)')).nullish(),
});
export type PutFiscalPackInput = z.infer<typeof putFiscalPackInput>;

const method = lenientEnum(PAYMENT_METHODS);

export const putPaymentMethodsInput = z.object({
  territoryId: zId,
  /** At least one; repeats are ignored. */
  methods: z.array(method).min(1).max(10),
});
export type PutPaymentMethodsInput = z.infer<typeof putPaymentMethodsInput>;
