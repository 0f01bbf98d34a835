/**
 * Client applications of the journeys API and their OAuth 2.0 client-credentials tokens (RFC 6749 section 4.4).
 * Secrets are shown once and kept as salted scrypt hashes compared in constant time; every secret check goes
 * through the credential guard (attempts per client). Tokens are JWTs of their own `typ`, so a client token can
 * never pass as a user token nor the reverse; deactivation and rotation end the tokens issued before at once.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { type EntityManager, type InferEntity, LockMode } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { ClientApplication, type ClientScope } from '../../entities/client-application.entity.js';
import { signAccessToken } from '../../platform/jwt.js';
import { CLIENT_TOKEN_SECONDS, CLIENT_TOKEN_TYPE, clientTokenSettings } from '../../policy/client-caller.js';
import { AppError, notFound } from '../../platform/problems.js';
import type { PublicServiceContext, ServiceContext } from '../../platform/service-context.js';
import { guardedCheck } from '../auth/credential-guard.js';
import type { ClientOutput, ClientWithSecretOutput, RegisterClientInput } from './clients.schemas.js';

const scrypt = promisify(scryptCallback) as (secret: string, salt: Buffer, length: number) => Promise<Buffer>;

type ClientRow = InferEntity<typeof ClientApplication>;

async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, 32);
  return `scrypt$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length);
  return timingSafeEqual(actual, expected);
}

const newSecret = () => randomBytes(32).toString('base64url');
const newClientId = () => `cli_${randomBytes(12).toString('hex')}`;
/** The form of every client id issued (`newClientId`): anything else names no client. */
const CLIENT_ID = /^cli_[0-9a-f]{24}$/;

function toOutput(row: ClientRow): ClientOutput {
  return {
    id: row.id,
    clientId: row.clientId,
    name: row.name,
    description: row.description ?? null,
    scopes: row.scopes,
    redirectUris: row.redirectUris,
    isActive: row.isActive,
    createdAtUtc: row.createdAtUtc.toISOString(),
  };
}

/** SYSTEM_ADMIN (the procedure checks): registers a client and answers its secret, once. */
export async function registerClient(ctx: ServiceContext, input: RegisterClientInput): Promise<ClientWithSecretOutput> {
  const secret = newSecret();
  const row = ctx.em.create(ClientApplication, {
    clientId: newClientId(),
    secretHash: await hashSecret(secret),
    name: input.name,
    description: input.description ?? null,
    scopes: [...new Set(input.scopes)],
    redirectUris: input.redirectUris,
    createdByUserId: ctx.user.id,
  });
  audit(ctx.em, {
    actorUserId: ctx.user.id,
    action: 'client.registered',
    subjectType: 'ClientApplication',
    subjectId: row.id,
    data: { clientId: row.clientId },
  });
  await ctx.em.flush();
  return { ...toOutput(row), clientSecret: secret };
}

export async function listClients(ctx: ServiceContext): Promise<ClientOutput[]> {
  const rows = await ctx.em.find(ClientApplication, {}, { orderBy: { createdAtUtc: 'asc' } });
  return rows.map(toOutput);
}

async function findClient(em: EntityManager, id: string) {
  const row = await em.findOne(ClientApplication, { id });
  if (!row) throw notFound('Client application');
  return row;
}

/** A new secret, shown once: the old one and every token issued with it stop working at once. */
export async function rotateClientSecret(ctx: ServiceContext, input: { id: string }): Promise<ClientWithSecretOutput> {
  // 404 before the slow hash; the row is read again under its lock below.
  await findClient(ctx.em, input.id);
  const secret = newSecret();
  const secretHash = await hashSecret(secret);
  // Under the row's lock: two rotations at once are two in turn (versions n+1 and n+2, the later one's secret live),
  // never one lost, which would leave a token of the lost version valid.
  const row = await ctx.em.transactional(async (tx) => {
    const locked = await tx.findOne(ClientApplication, { id: input.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!locked) throw notFound('Client application');
    locked.secretHash = secretHash;
    locked.secretVersion += 1;
    audit(tx, { actorUserId: ctx.user.id, action: 'client.secret_rotated', subjectType: 'ClientApplication', subjectId: locked.id });
    return locked;
  });
  return { ...toOutput(row), clientSecret: secret };
}

/** Deactivation (idempotent): no new token, and the ones issued stop working at once. */
export async function deactivateClient(ctx: ServiceContext, input: { id: string }): Promise<void> {
  const row = await findClient(ctx.em, input.id);
  if (!row.isActive) return;
  row.isActive = false;
  audit(ctx.em, { actorUserId: ctx.user.id, action: 'client.deactivated', subjectType: 'ClientApplication', subjectId: row.id });
  await ctx.em.flush();
}

/** An RFC 6749 section 5.2 error: its `error` code and the HTTP status it is answered with. */
export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'invalid_scope' | 'unsupported_grant_type',
    readonly description: string,
    readonly status: 400 | 401 | 429 = 400,
  ) {
    super(description);
  }
}

export interface TokenRequest {
  grantType: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
  scope: string | undefined;
}

/**
 * The token endpoint's work: a client_credentials grant for an active client whose secret matches, with the
 * requested scopes it holds (none requested: all of them). Wrong secrets count against the client in the credential
 * guard (429 past the limit), whatever the transport or address.
 */
export async function issueClientToken(ctx: PublicServiceContext, request: TokenRequest) {
  if (request.grantType !== 'client_credentials') {
    throw new OAuthError(request.grantType ? 'unsupported_grant_type' : 'invalid_request', 'grant_type must be client_credentials.');
  }
  if (!request.clientId || !request.clientSecret) throw new OAuthError('invalid_client', 'Client authentication failed.', 401);
  // Refused before any query: an id of another form is unknown anyway, and may hold what PostgreSQL rejects (NUL).
  if (!CLIENT_ID.test(request.clientId)) throw new OAuthError('invalid_client', 'Client authentication failed.', 401);
  const row = await ctx.em.findOne(ClientApplication, { clientId: request.clientId });
  const subject = { key: `client-secret:${row?.id ?? 'unknown'}`, userId: null, label: 'client secret' };
  let valid = false;
  if (row) {
    try {
      valid = await guardedCheck(ctx.em, subject, ctx.clock.now(), () => secretMatches(request.clientSecret!, row.secretHash));
    } catch (error) {
      // Only the guard's lockout is this client's 429; a database failure stays one (503, not a lockout).
      if (!(error instanceof AppError && error.problemCode === 'RATE_LIMIT_EXCEEDED')) throw error;
      throw new OAuthError('invalid_client', 'Too many failed attempts for this client; try again later.', 429);
    }
  }
  if (!row || !valid || !row.isActive) throw new OAuthError('invalid_client', 'Client authentication failed.', 401);
  const requested = request.scope?.trim() ? request.scope.trim().split(/\s+/) : row.scopes;
  const unknown = requested.filter((s) => !row.scopes.includes(s as ClientScope));
  if (unknown.length > 0) throw new OAuthError('invalid_scope', `The client does not hold: ${unknown.join(' ')}.`);
  const scopes = [...new Set(requested)] as ClientScope[];
  const { token } = await signAccessToken(
    clientTokenSettings(ctx.config.jwt),
    row.id,
    { client_id: row.clientId, scope: scopes.join(' '), sv: row.secretVersion },
    CLIENT_TOKEN_TYPE,
  );
  return { access_token: token, token_type: 'Bearer' as const, expires_in: CLIENT_TOKEN_SECONDS, scope: scopes.join(' ') };
}
