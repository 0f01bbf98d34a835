import { execSql } from '../../db/sql.js';
import type { PublicServiceContext } from '../../platform/service-context.js';
import { type EntityManager, type InferEntity, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { AppConfig } from '../../config.js';
import { audit } from '../../entities/audit.entity.js';
import { TwoFactorChallenge } from '../../entities/auth.entity.js';
import { User } from '../../entities/user.entity.js';
import { forgetCachedUser } from '../../policy/caller.js';
import { clock } from '../../platform/clock.js';
import { newId } from '../../platform/ids.js';
import { conflict, unauthorized, validationFailed } from '../../platform/problems.js';
import type { LoginOutput, SocialLoginInput, TwoFactorRequiredOutput } from './auth.schemas.js';
import { resolveExternalId } from './identity-provider.js';
import { issueSession } from './sessions.service.js';

type UserRow = InferEntity<typeof User>;

export const CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * Social login or sign-up. Returning users are found by (provider, externalId); a new user must give exactly one
 * of cpf or foreignDocument. Users with 2FA get a challenge instead of tokens.
 */
export async function socialLogin(ctx: PublicServiceContext, input: SocialLoginInput): Promise<LoginOutput | TwoFactorRequiredOutput> {
  const { em, config } = ctx;
  const externalId = await resolveExternalId(config, input);
  const user = (await em.findOne(User, { authProvider: input.authProvider, externalId })) ?? (await signUp(em, input, externalId));
  if (user.deletedAtUtc) throw unauthorized('This account has been deleted.');
  await grantBootstrapAdmin(em, config, user);
  if (user.twoFactorEnabled) return startChallenge(em, user);
  return issueSession(em, config, user);
}

export const REGISTRATION_REFUSED =
  'The account could not be created with these details. If you already have an account, sign in with the provider you used before.';

async function signUp(em: EntityManager, input: SocialLoginInput, externalId: string): Promise<UserRow> {
  if (Boolean(input.cpf) === Boolean(input.foreignDocument)) {
    throw validationFailed('cpf', 'a new user must give exactly one of cpf or foreignDocument');
  }
  const id = newId();
  try {
    await em.transactional(async (tx) => {
      tx.create(User, {
        id,
        authProvider: input.authProvider,
        externalId,
        displayName: input.displayName,
        email: input.email ?? null,
        cpf: input.cpf ?? null,
        foreignDocument: input.foreignDocument ?? null,
        phoneNumber: input.phoneNumber ?? null,
      });
    });
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    // A concurrent first login of the same identity won the insert: use its row.
    em.clear();
    const existing = await em.findOne(User, { authProvider: input.authProvider, externalId });
    if (existing) return existing;
    // Generic on purpose: naming the CPF would make sign-up an oracle for whose national id is registered. Probing
    // still costs a verified provider identity per try in production, and sign-ups count in the auth rate bucket.
    throw conflict(REGISTRATION_REFUSED, 'REGISTRATION_REFUSED');
  }
  return em.findOneOrFail(User, { id });
}

/** BOOTSTRAP_ADMINS ("provider:externalId") hold SYSTEM_ADMIN from their first login on; granted once, audited. */
async function grantBootstrapAdmin(em: EntityManager, config: AppConfig, user: UserRow) {
  const identity = `${user.authProvider.toLowerCase()}:${user.externalId}`;
  if (!config.auth.bootstrapAdmins.includes(identity)) return;
  await em.transactional(async (tx) => {
    const inserted = await execSql<{ id: string }>(
      tx,
      `insert into user_permission (id, created_at_utc, user_id, permission) values (?, ?, ?, 'SYSTEM_ADMIN')
       on conflict (user_id, permission) do nothing returning id`,
      [newId(), clock.now(), user.id],
    );
    if (inserted.length === 0) return;
    audit(tx, {
      actorUserId: null,
      action: 'permission.granted',
      subjectType: 'User',
      subjectId: user.id,
      data: { permission: 'SYSTEM_ADMIN', source: 'BOOTSTRAP_ADMINS' },
    });
  });
  forgetCachedUser(user.id);
}

async function startChallenge(em: EntityManager, user: UserRow): Promise<TwoFactorRequiredOutput> {
  const challenge = em.create(TwoFactorChallenge, { userId: user.id, expiresAtUtc: new Date(clock.now().getTime() + CHALLENGE_TTL_MS) });
  await em.flush();
  return { twoFactorRequired: true, challengeId: challenge.id, marker: `2FA_REQUIRED:${challenge.id}` };
}
