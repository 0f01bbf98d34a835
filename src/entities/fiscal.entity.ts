import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, textArray } from './base.entity.js';
import { PAYMENT_METHODS, type PaymentMethod } from './checkout.entity.js';
import { Territory } from './territory.entity.js';

export const FISCAL_CAPABILITIES = ['kyc', 'pix', 'nfse'] as const;
export type FiscalCapability = (typeof FISCAL_CAPABILITIES)[number];

/**
 * The fiscal packs this code implements (the spec's FiscalPackDefinition). They are code, not data: a pack is a set
 * of behaviours, so a new one ships with a release, and a binding can only name one of these (a check constraint).
 */
export const FISCAL_PACKS = [
  { id: 'brazil.v1', countryCode: 'BR', displayName: 'Brazil (KYC, PIX, NFS-e)', capabilities: ['kyc', 'pix', 'nfse'] },
] as const satisfies readonly {
  id: string;
  countryCode: string;
  displayName: string;
  capabilities: readonly FiscalCapability[];
}[];
export type FiscalPackId = (typeof FISCAL_PACKS)[number]['id'];
export const FISCAL_PACK_IDS = FISCAL_PACKS.map((f) => f.id) as [FiscalPackId, ...FiscalPackId[]];

/** Spelled as DESIGN section 13 spells them; inputs accept any case. */
export const FISCAL_PACK_STATUSES = ['Off', 'Active'] as const;
export type FiscalPackStatus = (typeof FISCAL_PACK_STATUSES)[number];

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * The fiscal pack bound to a territory (the spec's TerritoryFiscalPackBinding), one per territory, replaced in place.
 * No row means the legacy default: Off. `activatedBy/At` describe the current activation (null while Off).
 */
export const TerritoryFiscalPack = defineEntity({
  name: 'TerritoryFiscalPack',
  tableName: 'territory_fiscal_pack',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').unique(),
    packId: p.string().length(50).$type<FiscalPackId>(),
    status: p.string().length(10).$type<FiscalPackStatus>(),
    /** The IBGE code of the municipality (7 digits) that issues the territory's service invoices (NFS-e). */
    municipalityIbge: p.string().length(7).nullable(),
    activatedByUserId: p.uuid().nullable(),
    activatedAtUtc: p.datetime().nullable(),
    updatedByUserId: p.uuid(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [
    { name: 'territory_fiscal_pack_pack_check', expression: `pack_id in (${list(FISCAL_PACK_IDS)})` },
    { name: 'territory_fiscal_pack_status_check', expression: `status in (${list(FISCAL_PACK_STATUSES)})` },
    { name: 'territory_fiscal_pack_ibge_check', expression: `municipality_ibge is null or municipality_ibge ~ '^[0-9]{7}$'` },
  ],
});

/**
 * The payment methods a territory accepts at checkout (the spec's TerritoryPaymentMethodsConfig), one per territory.
 * No row means never configured: every method is accepted.
 */
export const TerritoryPaymentMethods = defineEntity({
  name: 'TerritoryPaymentMethods',
  tableName: 'territory_payment_methods',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').unique(),
    methods: textArray().$type<PaymentMethod[]>(),
    updatedByUserId: p.uuid(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [
    {
      name: 'territory_payment_methods_methods_check',
      expression: `cardinality(methods) >= 1 and methods <@ array[${list(PAYMENT_METHODS)}]::text[]`,
    },
  ],
});
