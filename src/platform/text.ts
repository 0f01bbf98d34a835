import { z } from 'zod';

// Control characters except tab, line feed and carriage return.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
const TAG = /<[^>]*>/g;

// Bidirectional overrides and isolates can disguise text (e.g. reversed file names); no legitimate input needs them.
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/g;

/**
 * Strips HTML tags, stray angle brackets, control and bidi-override characters, replaces lone UTF-16 surrogates
 * (PostgreSQL refuses them in jsonb), then trims.
 */
export function sanitizeText(value: string): string {
  return value.toWellFormed().replace(TAG, '').replace(/[<>]/g, '').replace(CONTROL, '').replace(BIDI_CONTROL, '').trim();
}

/**
 * `pipe` with the length limits its output checks stated on its input too (`meta`): the OpenAPI document describes
 * a pipe by its input, a plain string, and clients in other languages would not see the limits of a text normalised
 * before it is checked. A text within them is always accepted; a longer one only if normalising brings it within.
 */
export function withOutputLimits<T extends z.ZodPipe<z.ZodType, z.ZodType>>(pipe: T): T {
  const limits: { minLength?: number; maxLength?: number } = {};
  for (const check of pipe._zod.def.out._zod.def.checks ?? []) {
    const def = check._zod.def as { check: string; minimum?: number; maximum?: number };
    if (def.check === 'min_length' && def.minimum) limits.minLength = def.minimum;
    if (def.check === 'max_length') limits.maxLength = def.maximum;
  }
  return pipe.meta(limits);
}

/**
 * Free text from a client: sanitized before the length checks, so limits apply to what is stored.
 * Every schema that takes free text uses these helpers.
 */
export const zText = (opts: { min?: number; max: number }) =>
  withOutputLimits(
    z
      .string()
      .transform(sanitizeText)
      .pipe(
        z
          .string()
          .min(opts.min ?? 1, opts.min === 0 ? undefined : 'must not be empty')
          .max(opts.max),
      ),
  );

export const zOptionalText = (max: number) =>
  withOutputLimits(z.string().transform(sanitizeText).pipe(z.string().max(max)))
    .nullish()
    .transform((v) => (v ? v : null));

const BLOCKED_SCHEMES = /^\s*(javascript|data|vbscript):/i;

/** http(s) URLs only; `javascript:` and `data:` are refused. */
export const zUrl = z
  .string()
  .trim()
  .max(2000)
  .refine((v) => !BLOCKED_SCHEMES.test(v), 'scheme not allowed')
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }));

/** Normalizes a relative storage path: no `..`, no leading slash, forward slashes only. */
export function normalizePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (!part || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part.replace(CONTROL, ''));
  }
  return parts.join('/');
}
