import { z } from 'zod';

/**
 * A plain decimal number as text: optional sign, digits with an optional fraction (or a fraction alone), optional
 * exponent. No blanks, no hex/octal/binary prefixes, no `Infinity`/`NaN`. Compiled once (hot paths parse with it).
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The preprocess step of {@link zNumeric}: a decimal string becomes its number, anything else passes unchanged so
 * the number schema refuses it (`" "`, `""`, `null`, `true`, `[]`, `"0x10"` are 400s, never a silent 0 or 16;
 * `"1e309"` becomes Infinity, which a number schema refuses too). Exported so the REST bridge recognises numeric
 * query keys (src/openapi/plugin.ts).
 */
export function decimalInput(value: unknown): unknown {
  return typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value;
}

type Numeric<T extends z.ZodNumber> = z.ZodPipe<z.ZodTransform<unknown, unknown>, T>;

/**
 * A number input that also takes its decimal text (query strings, form fields), used instead of
 * `z.coerce.number()`, which turns blanks, `null`, booleans and `[]` into 0 and `"0x10"` into 16. Out-of-range
 * values stay 400s. The OpenAPI document describes it by `schema` (`type: number`/`integer` and its bounds):
 *
 * - without `fallback` the value is required. The parameter says so explicitly (`meta.param`): zod-openapi reads
 *   a preprocess step as optional.
 * - with `fallback` an absent value is that number, given as the parameter's `default`. It is a `prefault` (an
 *   input value, parsed like one): zod drops a `.default()` from the input schema of a preprocessed value, so
 *   write `zNumeric(schema, 20)`, not `zNumeric(schema).default(20)`.
 *
 *   zNumeric(z.number().min(-90).max(90))              required
 *   zNumeric(z.number().int().min(1).max(100), 20)     20 when absent
 */
export function zNumeric<T extends z.ZodNumber>(schema: T): Numeric<T>;
export function zNumeric<T extends z.ZodNumber>(schema: T, fallback: number): z.ZodPrefault<Numeric<T>>;
export function zNumeric<T extends z.ZodNumber>(schema: T, fallback?: number) {
  const numeric = z.preprocess(decimalInput, schema) as Numeric<T>;
  return fallback === undefined ? numeric.meta({ param: { required: true } }) : numeric.prefault(fallback);
}
