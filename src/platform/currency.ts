import { z } from 'zod';

/** The currency of a price, a payout configuration or a report when none is given (DESIGN section 4). */
export const DEFAULT_CURRENCY = 'BRL';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** ISO 4217 (DESIGN section 4), any case in, upper-case out: items, payout configurations, financial views. */
export const zCurrency = z
  .string()
  .trim()
  .transform((v) => v.toUpperCase())
  .refine((v) => CURRENCIES.has(v), 'must be an ISO 4217 currency code')
  .meta({ minLength: 3, maxLength: 3, description: 'ISO 4217 currency code, any case (e.g. BRL)' });
