import { z } from 'zod';
import { CONTACT_VISIBILITIES, STORE_STATUSES } from '../../entities/store.entity.js';
import { zId } from '../../platform/ids.js';
import { skipTakeInput } from '../../platform/pagination.js';
import { zOptionalText, zText } from '../../platform/text.js';
import { lenientEnum } from '../../platform/enums.js';

/** Spec limits: store name 200, description 2000. */
export const STORE_NAME_MAX = 200;
export const STORE_DESCRIPTION_MAX = 2000;
export const STORE_PHONE_MAX = 50;

/** `public`, `PUBLIC` and `Public` are one value, answered as the spec spells it. */
const contactVisibility = z.preprocess(
  (v) => (typeof v === 'string' ? (CONTACT_VISIBILITIES.find((c) => c.toLowerCase() === v.trim().toLowerCase()) ?? v) : v),
  z.enum(CONTACT_VISIBILITIES),
);
const storeStatus = lenientEnum(STORE_STATUSES);

const contactInput = z
  .object({
    phone: zOptionalText(STORE_PHONE_MAX).refine((v) => v === null || /^[0-9+()\-.\s]{3,}$/.test(v), 'must be a phone number'),
    email: z
      .string()
      .trim()
      .max(320)
      .pipe(z.email({ error: 'must be an email address' }))
      .nullish()
      .transform((v) => v || null),
  })
  .meta({ id: 'StoreContactInput' });

export const storeContact = z.object({ phone: z.string().nullable(), email: z.string().nullable() }).meta({ id: 'StoreContact' });

export const storeOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    ownerUserId: z.uuid(),
    displayName: z.string(),
    description: z.string().nullable(),
    contactVisibility: z.enum(CONTACT_VISIBILITIES),
    /** Null for others than the owner and the territory's curators when contactVisibility is Private. */
    contact: storeContact.nullable(),
    status: z.enum(STORE_STATUSES),
    paymentsEnabled: z.boolean(),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Store' });
export type StoreOutput = z.infer<typeof storeOutput>;

export const upsertStoreInput = z.object({
  /** Optional when the X-Session-Id session has a selected territory. */
  territoryId: zId.nullish(),
  displayName: zText({ max: STORE_NAME_MAX }),
  description: zOptionalText(STORE_DESCRIPTION_MAX),
  contactVisibility,
  contact: contactInput.nullish(),
});
export type UpsertStoreInput = z.infer<typeof upsertStoreInput>;

/** Partial update: omitted fields keep their value; `description: null` clears it; `contact` replaces the contact. */
export const updateStoreInput = z.object({
  storeId: zId,
  displayName: zText({ max: STORE_NAME_MAX }).optional(),
  description: zText({ min: 0, max: STORE_DESCRIPTION_MAX }).nullable().optional(),
  contactVisibility: contactVisibility.optional(),
  contact: contactInput.nullable().optional(),
  status: storeStatus.optional(),
});
export type UpdateStoreInput = z.infer<typeof updateStoreInput>;

export const storeIdInput = z.object({ storeId: zId });
export const listStoresInput = z.object({ territoryId: zId.optional(), ...skipTakeInput() });
export type ListStoresInput = z.infer<typeof listStoresInput>;
