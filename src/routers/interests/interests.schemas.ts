import { z } from 'zod';
import { withOutputLimits } from '../../platform/text.js';

export const MAX_INTERESTS_PER_USER = 10;

// Letters of any script (with combining marks), decimal digits, spaces and hyphens.
const TAG = /^[\p{L}\p{M}\p{Nd} -]+$/u;

/** An interest tag as stored: NFC, trimmed, lower-cased, 1..50 characters. */
export const zInterestTag = withOutputLimits(
  z
    .string()
    .transform((v) => v.normalize('NFC').trim().toLowerCase())
    .pipe(z.string().min(1, { error: 'must not be empty', abort: true }).max(50).regex(TAG, 'may contain only letters, digits, spaces and hyphens')),
);

/** Whether a (normalised) tag could ever have been stored: anything else is absent by definition. */
export const isStorableTag = (tag: string) => zInterestTag.safeParse(tag).success;

export const interestsOutput = z.array(z.string()).meta({ id: 'InterestList', description: 'My interest tags, lower-case, oldest first' });

export const addInput = z.object({ interestTag: zInterestTag });
/**
 * Removal takes any path segment: a tag that could never have been stored is simply absent, and removing an absent
 * tag is a 204 (spec). Normalised like stored tags so `Surf%20` removes `surf`.
 */
export const removeInput = z.object({
  tag: z
    .string()
    .max(200)
    .transform((v) => v.normalize('NFC').trim().toLowerCase()),
});
