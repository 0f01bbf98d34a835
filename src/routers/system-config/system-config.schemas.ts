import { z } from 'zod';
import { zOptionalText, zText } from '../../platform/text.js';

/** `Area:Name` style keys: letters, digits, `:`, `.`, `_`, `-`. */
export const zConfigKey = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9:._-]*$/, 'must be letters, digits, ":", ".", "_" or "-"');

export const systemConfigOutput = z
  .object({
    key: z.string(),
    value: z.string(),
    category: z.string().nullable(),
    description: z.string().nullable(),
    updatedAtUtc: z.iso.datetime(),
    updatedByUserId: z.uuid().nullable(),
  })
  .meta({ id: 'SystemConfigEntry' });
export type SystemConfigOutput = z.infer<typeof systemConfigOutput>;

export const byKeyInput = z.object({ key: zConfigKey });

/** Upsert body. Omitted `category`/`description` keep the stored ones. */
export const putInput = z.object({
  key: zConfigKey,
  value: zText({ max: 4000 }),
  category: zOptionalText(100),
  description: zOptionalText(1000),
});
export type PutInput = z.infer<typeof putInput>;
