import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { newId } from './ids.js';

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

/** HS256 token with sub, iss, aud, iat, nbf, exp, jti. Roles are not in it: they are read per request. */
export async function signAccessToken(settings: JwtSettings, subject: string, extra: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT(extra)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
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

export async function verifyAccessToken(settings: JwtSettings, token: string, audience = settings.audience): Promise<TokenCheck> {
  try {
    const { payload } = await jwtVerify(token, keyOf(settings.signingKey), {
      algorithms: ['HS256'],
      issuer: settings.issuer,
      audience,
    });
    if (!payload.sub) return { ok: false, reason: 'The token has no subject.' };
    return { ok: true, subject: payload.sub, claims: payload };
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) return { ok: false, reason: 'The token has expired.' };
    return { ok: false, reason: 'The token is invalid.' };
  }
}
