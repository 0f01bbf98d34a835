/**
 * Who the calling client application is (journeys API, v2): its token verified (`typ: client+jwt`), and the client
 * read from the database on every call, so a deactivation or a secret rotation (the token's `sv`) takes effect at once. The user a
 * client acts for comes separately, from `X-User-Token` (src/http/auth.ts).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { runHotRead, type SqlQuery } from '../db/sql.js';
import { CLIENT_SCOPES, type ClientScope } from '../entities/client-application.entity.js';
import { bearerToken, cachedTokenCheck, type JwtSettings, verifyAccessTokenCached } from '../platform/jwt.js';

/** The `typ` of client tokens: never accepted where a user token is expected (`at+jwt`), nor the reverse. */
export const CLIENT_TOKEN_TYPE = 'client+jwt';
export const CLIENT_TOKEN_SECONDS = 3600;
export const clientTokenSettings = (jwt: JwtSettings): JwtSettings => {
  let settings = clientSettings.get(jwt);
  if (!settings) clientSettings.set(jwt, (settings = { ...jwt, expiresInSeconds: CLIENT_TOKEN_SECONDS }));
  return settings;
};
/** Made once per app's settings, not per call (the settings are read, never changed, once loaded). */
const clientSettings = new WeakMap<JwtSettings, JwtSettings>();

/** The client behind a presented client token: active, not rotated since, with the token's scopes it still holds. */
export interface AuthClient {
  id: string;
  clientId: string;
  scopes: ClientScope[];
}

export type ClientAuth = { client: AuthClient; error: null } | { client: null; error: string };

/** Outside /api/v2 there is no client application. */
export const NO_CLIENT: ClientAuth = { client: null, error: 'Client tokens are used on /api/v2 only.' };

export interface ClientRow {
  client_id: string;
  scopes: ClientScope[];
  is_active: boolean;
  secret_version: number;
}

/** What every v2 call reads of its client application. */
export const clientRowQuery = (id: string): SqlQuery => ({
  sql: 'select client_id, scopes, is_active, secret_version from client_application where id = ?::uuid',
  params: [id],
});

export async function resolveClientToken(header: string | undefined, jwt: JwtSettings, em: EntityManager): Promise<ClientAuth> {
  const token = header ? bearerToken(header) : null;
  if (!token) return { client: null, error: 'A client access token is required (Authorization: Bearer, from POST /oauth/token).' };
  const settings = clientTokenSettings(jwt);
  const check =
    cachedTokenCheck(settings, token, jwt.audience, CLIENT_TOKEN_TYPE) ?? (await verifyAccessTokenCached(settings, token, jwt.audience, CLIENT_TOKEN_TYPE));
  if (!check.ok) return { client: null, error: check.reason === 'The token has expired.' ? check.reason : 'The client token is invalid.' };
  // Read on every call (deactivation and rotation take effect at once): a prepared key lookup.
  const [row] = await runHotRead<ClientRow>(em, clientRowQuery(check.subject), { prepared: true });
  if (!row?.is_active) return { client: null, error: 'The client application is not active.' };
  // Issued under an earlier secret: the rotation that replaced it ended the token too.
  if (check.claims.sv !== row.secret_version) return { client: null, error: 'The client token was revoked.' };
  const granted = typeof check.claims.scope === 'string' ? check.claims.scope.split(' ') : [];
  const scopes = CLIENT_SCOPES.filter((s) => granted.includes(s) && row.scopes.includes(s));
  return { client: { id: check.subject, clientId: row.client_id, scopes }, error: null };
}
