import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { User } from './user.entity.js';

/** Refresh tokens rotate: each use consumes one and issues the next in the same family. */
export const RefreshToken = defineEntity({
  name: 'RefreshToken',
  tableName: 'refresh_token',
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').index(),
    familyId: p.uuid().index(),
    tokenHash: p.string().length(64).unique(),
    expiresAtUtc: p.datetime(),
    consumedAtUtc: p.datetime().nullable(),
    revokedAtUtc: p.datetime().nullable(),
  },
});

/** A pending second factor after a password-less social login of a user with 2FA. */
export const TwoFactorChallenge = defineEntity({
  name: 'TwoFactorChallenge',
  tableName: 'two_factor_challenge',
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').index(),
    expiresAtUtc: p.datetime(),
    attempts: p.integer().default(0),
    consumedAtUtc: p.datetime().nullable(),
  },
});

/** Single-use recovery codes, stored as SHA-256 hashes. */
export const RecoveryCode = defineEntity({
  name: 'RecoveryCode',
  tableName: 'recovery_code',
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').index(),
    codeHash: p.string().length(64),
    usedAtUtc: p.datetime().nullable(),
  },
});

/**
 * Attempts at a secret (a second-factor code, a recovery code...) per subject within a window: the guard counts an
 * attempt before checking it, so a burst of parallel guesses cannot all be checked before the count is reached.
 */
export const CredentialAttempt = defineEntity({
  name: 'CredentialAttempt',
  tableName: 'credential_attempt',
  properties: {
    /** What is guessed, and whose: `second-factor:<userId>`. */
    subjectKey: p.string().length(200).primary(),
    attempts: p.integer(),
    windowStartedAtUtc: p.datetime(),
  },
});
