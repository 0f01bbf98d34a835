import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { isUuid, newId } from './ids.js';

export interface JwtSettings {
  signingKey: string;
  issuer: string;
  audience: string;
  expiresInSeconds: number;
}

const keys = new Map<string, Uint8Array>();
const keyOf = (secret: string) => {
  let key = keys.get(secret);
  if (!key) keys.set(secret, (key = new TextEncoder().encode(secret)));
  return key;
};

/**
 * The `typ` of user access tokens (RFC 9068). Client-credential tokens of the journeys API get their own `typ`, so
 * one can never be presented as the other.
 */
export const USER_TOKEN_TYPE = 'at+jwt';
/** A user token without its session cannot be ended by a logout: it is refused. */
const USER_SESSION_CLAIMS = ['sid', 'auth_time'];
/** Seconds of clock skew tolerated between issuer and verifier (iat slightly ahead, exp just passed). */
export const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * A user's access token: `sid` names the session (the refresh-token family it belongs to), so one session can be
 * ended alone; `auth_time` is when the person last proved who they are (the login that opened the session, kept
 * across refreshes), which step-up checks read.
 */
export function signUserToken(settings: JwtSettings, session: { userId: string; sessionId: string; authenticatedAt: Date }) {
  return signAccessToken(settings, session.userId, { sid: session.sessionId, auth_time: Math.floor(session.authenticatedAt.getTime() / 1000) });
}

/** HS256 token with sub, iss, aud, iat, nbf, exp, jti. Roles are not in it: they are read per request. */
export async function signAccessToken(settings: JwtSettings, subject: string, extra: Record<string, unknown> = {}, typ = USER_TOKEN_TYPE) {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT(extra)
    .setProtectedHeader({ alg: 'HS256', typ })
    .setSubject(subject)
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + settings.expiresInSeconds)
    .setJti(newId())
    .sign(keyOf(settings.signingKey));
  return { token, expiresInSeconds: settings.expiresInSeconds };
}

export type TokenCheck = { ok: true; subject: string; claims: Record<string, unknown> } | { ok: false; reason: string };

/**
 * Accepts only tokens of the expected `typ` carrying every claim we issue; `maxTokenAge` refuses a token issued
 * in the future or living longer than the configured lifetime, whatever its `exp` says.
 */
export async function verifyAccessToken(settings: JwtSettings, token: string, audience = settings.audience, typ = USER_TOKEN_TYPE): Promise<TokenCheck> {
  try {
    const { payload } = await jwtVerify(token, keyOf(settings.signingKey), {
      algorithms: ['HS256'],
      issuer: settings.issuer,
      audience,
      typ,
      requiredClaims: ['sub', 'iat', 'exp', 'jti', ...(typ === USER_TOKEN_TYPE ? USER_SESSION_CLAIMS : [])],
      maxTokenAge: settings.expiresInSeconds + CLOCK_TOLERANCE_SECONDS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    });
    if (typeof payload.exp === 'number' && typeof payload.iat === 'number' && payload.exp - payload.iat > settings.expiresInSeconds + CLOCK_TOLERANCE_SECONDS) {
      return { ok: false, reason: 'The token is invalid.' };
    }
    if (!payload.sub) return { ok: false, reason: 'The token has no subject.' };
    // Subjects are ids; a user token's session is an id and its sign-in a time. Checked here, once per token (the
    // verified check is cached), not by each request's caller.
    if (!isUuid(payload.sub)) return { ok: false, reason: 'The token is invalid.' };
    if (typ === USER_TOKEN_TYPE && (typeof payload.sid !== 'string' || !isUuid(payload.sid) || typeof payload.auth_time !== 'number')) {
      return { ok: false, reason: 'The token is invalid.' };
    }
    return { ok: true, subject: payload.sub, claims: payload };
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) return { ok: false, reason: 'The token has expired.' };
    return { ok: false, reason: 'The token is invalid.' };
  }
}

/**
 * `verifyAccessToken`, remembered until the token expires: a client presents the same token on every request of its
 * lifetime, and the HMAC and claim checks need not be repeated for each. Who the token's subject is now (deleted,
 * signed out, rotated, deactivated) is still read per request by the callers. Per key and settings: a token valid for
 * one configuration says nothing about another. Bounded; the oldest entry goes first.
 */
export async function verifyAccessTokenCached(settings: JwtSettings, token: string, audience = settings.audience, typ = USER_TOKEN_TYPE): Promise<TokenCheck> {
  const verified = level(level(level(level(level(verifiedTokens, settings.signingKey), settings.issuer), settings.expiresInSeconds), audience), typ);
  const hit = verified.get(token);
  if (hit && hit.expiresAtMs > Date.now()) return hit.check;
  if (hit) verified.delete(token);
  const check = await verifyAccessToken(settings, token, audience, typ);
  if (check.ok && typeof check.claims.exp === 'number') {
    if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
    verified.set(token, { check, expiresAtMs: check.claims.exp * 1000 });
  }
  return check;
}

type Verified = Map<string, { check: TokenCheck; expiresAtMs: number }>;
/**
 * Verified tokens by signing key, issuer, lifetime, audience and `typ` (nested, so no key string is built per
 * request: joining them cost ~1 us of each), then by the token.
 */
const verifiedTokens: Map<string, Map<string, Map<number, Map<string, Map<string, Verified>>>>> = new Map();
const VERIFIED_CACHE_SIZE = 10_000;

/** The map under `key` in `map`, made when missing. */
function level<K, V extends Map<unknown, unknown>>(map: Map<K, V>, key: K): V {
  let next = map.get(key);
  if (!next) map.set(key, (next = new Map() as V));
  return next;
}
