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
 * signed out, rotated, deactivated) is still read per request by the callers. An entry holds the settings, audience and
 * `typ` the token was verified for: a token valid for one configuration says nothing about another (one entry per
 * token: the last configuration it passed). Bounded; the oldest entry goes first.
 */
export async function verifyAccessTokenCached(settings: JwtSettings, token: string, audience = settings.audience, typ = USER_TOKEN_TYPE): Promise<TokenCheck> {
  const cached = cachedTokenCheck(settings, token, audience, typ);
  if (cached) return cached;
  const check = await verifyAccessToken(settings, token, audience, typ);
  if (check.ok && typeof check.claims.exp === 'number') {
    const tail = tailOf(token);
    verifiedTokens.delete(tail);
    if (verifiedTokens.size >= VERIFIED_CACHE_SIZE) verifiedTokens.delete(verifiedTokens.keys().next().value!);
    verifiedTokens.set(tail, { token, bare: NO_WHITESPACE.test(token), settings: { ...settings }, audience, typ, check, expiresAtMs: check.claims.exp * 1000 });
  }
  return check;
}

/**
 * The check `verifyAccessTokenCached` remembers for this token, settings, audience and `typ` while the token lives;
 * undefined otherwise. Synchronous, so a request presenting a known token takes no promise turn for it.
 */
export function cachedTokenCheck(settings: JwtSettings, token: string, audience = settings.audience, typ = USER_TOKEN_TYPE): TokenCheck | undefined {
  const hit = knownEntry(token);
  if (!hit || hit.audience !== audience || hit.typ !== typ || !sameSettings(hit.settings, settings)) return undefined;
  if (hit.expiresAtMs > Date.now()) return hit.check;
  verifiedTokens.delete(tailOf(token));
  return undefined;
}

/**
 * The token of an `Authorization: Bearer <token>` header (the scheme in any case, then whitespace), or null. A token
 * verified before, and without whitespace, is taken as it stands after `Bearer `, which is what the pattern would
 * capture; only other headers run it (~2.8k instructions on a token of ~300 characters).
 */
export function bearerToken(header: string): string | null {
  const token = header.startsWith('Bearer ') ? header.slice(7) : '';
  if (token && knownEntry(token)?.bare) return token;
  return /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? null;
}
const NO_WHITESPACE = /^\S+$/;

interface Verified {
  /** The whole token: the map's key is only its end. */
  token: string;
  /** Holds no whitespace (a token from `X-User-Token` is verified as sent). */
  bare: boolean;
  settings: JwtSettings;
  audience: string;
  typ: string;
  check: TokenCheck;
  expiresAtMs: number;
}
/**
 * Verified tokens by the last characters of their signature (132 bits of an HMAC), each entry holding the whole
 * token and what it was verified for. A lookup hashes those 22 characters, not a token of ~300 that arrives as a new
 * string on every request (~0.35 us a token); a token is only ever answered by the entry of that very token.
 */
const verifiedTokens = new Map<string, Verified>();
const VERIFIED_CACHE_SIZE = 10_000;
const TAIL_CHARS = 22;
const tailOf = (token: string) => token.slice(-TAIL_CHARS);

function knownEntry(token: string): Verified | undefined {
  const hit = verifiedTokens.get(tailOf(token));
  return hit?.token === token ? hit : undefined;
}

const sameSettings = (a: JwtSettings, b: JwtSettings) => a.signingKey === b.signingKey && a.issuer === b.issuer && a.expiresInSeconds === b.expiresInSeconds;
