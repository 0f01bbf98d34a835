import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';
import { bearerToken, CLOCK_TOLERANCE_SECONDS, cachedTokenCheck, verifyAccessTokenCached } from '../platform/jwt.js';
import type { AuthSession, AuthUser } from '../platform/service-context.js';
import { loadCaller } from '../policy/caller.js';
import { type ClientAuth, NO_CLIENT, resolveClientToken } from '../policy/client-caller.js';
import { isJourneyUrl } from './journey-path.js';

export interface RequestAuth {
  user: AuthUser | null;
  /** Why a presented token was refused; protected operations answer 401 with it. */
  error: string | null;
  /** When the presented token expires (ms since the epoch): open subscriptions end then. */
  expiresAtMs?: number;
  /** The signed-in session the token belongs to. */
  session?: AuthSession;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: RequestAuth;
    /** On /api/v2: the client application of the `Authorization` token. */
    client: ClientAuth;
  }
}

export async function resolveBearer(header: string | undefined, config: AppConfig, em: EntityManager): Promise<RequestAuth> {
  if (!header) return { user: null, error: null };
  const token = bearerToken(header);
  if (!token) return { user: null, error: 'The Authorization header must be "Bearer <token>".' };
  return resolveUserToken(token, config, em);
}

/** The caller of a user access token (the bearer of `Authorization`, or the `X-User-Token` of a journey). */
async function resolveUserToken(token: string, config: AppConfig, em: EntityManager): Promise<RequestAuth> {
  const check = cachedTokenCheck(config.jwt, token) ?? (await verifyAccessTokenCached(config.jwt, token));
  if (!check.ok) return { user: null, error: check.reason };
  // A verified user token's `sid` is a UUID and its `auth_time` a number (verifyAccessToken checks them).
  const { sid, auth_time: authTime } = check.claims as { sid: string; auth_time: number };
  const caller = await loadCaller(em, check.subject, config.jwt.expiresInSeconds + CLOCK_TOLERANCE_SECONDS);
  if (!caller) return { user: null, error: 'The token belongs to no active user.' };
  if (caller.endedSessionIds.has(sid)) return { user: null, error: 'The session was signed out.' };
  // Whole seconds on both sides (`iat` has no more): a token issued in the second of a sign-out still counts.
  const issuedAt = typeof check.claims.iat === 'number' ? check.claims.iat : 0;
  if (caller.tokensValidAfterMs !== null && issuedAt < Math.floor(caller.tokensValidAfterMs / 1000)) {
    return { user: null, error: 'The session was signed out.' };
  }
  return {
    user: caller.user,
    error: null,
    expiresAtMs: typeof check.claims.exp === 'number' ? check.claims.exp * 1000 : undefined,
    session: { id: sid, authenticatedAtMs: authTime * 1000 },
  };
}

/** Resolves `Authorization: Bearer` on every request before rate limiting and routing. */
/** `em` may be the ORM's root EntityManager: the lookup is one raw query, with no identity map involved. */
export const authPlugin = fp(
  async (app: FastifyInstance, opts: { config: AppConfig; em: EntityManager }) => {
    app.decorateRequest('auth', null as unknown as RequestAuth);
    app.decorateRequest('client', null as never);
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (isJourneyUrl(request.url)) {
        // The journeys API: `Authorization` is the client application's token, `X-User-Token` the user's.
        const userToken = request.headers['x-user-token'];
        request.client = await resolveClientToken(request.headers.authorization, opts.config.jwt, opts.em);
        request.auth = typeof userToken === 'string' && userToken ? await resolveUserToken(userToken, opts.config, opts.em) : { user: null, error: null };
        // Every log line of the call (its errors, "request completed") names the client application.
        const client = request.client.client;
        if (client) request.log = reply.log = request.log.child({ clientId: client.clientId });
        return;
      }
      request.client = NO_CLIENT;
      request.auth = await resolveBearer(request.headers.authorization, opts.config, opts.em);
    });
  },
  { name: 'auth' },
);
