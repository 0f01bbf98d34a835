import { z } from 'zod';

/**
 * Enum input in any letter case, answered in its canonical spelling (DESIGN 4: enum inputs are lenient and
 * case-insensitive): `pending`, `open`, `OPEN` and `Open` are `PENDING`, `OPEN`, `OPEN` and `Open` as each enum spells
 * them. Surrounding blanks are ignored. Any other value is left as it is, so the enum refuses it (400 naming the
 * field, listing the values). The OpenAPI document shows the canonical values.
 */
export function lenientEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const canonical = new Map(values.map((value) => [value.toLowerCase(), value]));
  return z.preprocess((v) => (typeof v === 'string' ? (canonical.get(v.trim().toLowerCase()) ?? v) : v), z.enum(values));
}
