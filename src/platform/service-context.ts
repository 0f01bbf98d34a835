/**
 * What every service method receives first: `(ctx, input)`. It carries the unit of work and the caller, never a
 * transport (no Fastify request, no tRPC context type), so the REST bridge, /trpc, WebSocket calls, jobs, tests and
 * the v2 journeys layer (which composes v1 services in one call) all build it the same way.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { AppConfig } from '../config.js';
import type { IdentityVerificationStatus, SystemPermission } from '../entities/user.entity.js';
import { clock as systemClock } from './clock.js';
import type { Storage } from './storage.js';

/** The caller behind a bearer token, with the roles read from the database (not from the token). */
export interface AuthUser {
  id: string;
  displayName: string;
  identityVerificationStatus: IdentityVerificationStatus;
  permissions: SystemPermission[];
}

/** The signed-in session a call was made in (the `sid` and `auth_time` of its access token). */
export interface AuthSession {
  id: string;
  /** When the person last proved who they are in this session (login, or second factor at login). */
  authenticatedAtMs: number;
}

export interface Clock {
  now(): Date;
}

/** A service call by an authenticated user. */
export interface ServiceContext {
  /** This call's own EntityManager fork (its unit of work). */
  em: EntityManager;
  user: AuthUser;
  /** The caller's signed-in session: null only outside requests (jobs, scripts) and for anonymous calls. */
  authSession: AuthSession | null;
  /** `X-Session-Id`, when sent: the territory selection of this client session. */
  sessionId: string | null;
  clock: Clock;
  /** Where uploaded bytes live (media, evidence). */
  storage: Storage;
  /** The process configuration (token lifetimes, keys, providers). */
  config: AppConfig;
}

/** A service call that may be anonymous (public reads, login). */
export type PublicServiceContext = Omit<ServiceContext, 'user'> & { user: AuthUser | null };

/** Holds any of the given system permissions. */
export const hasPermission = (user: AuthUser | null | undefined, ...permissions: SystemPermission[]) =>
  user !== null && user !== undefined && permissions.some((p) => user.permissions.includes(p));

export const isSystemAdmin = (user: AuthUser | null | undefined) => hasPermission(user, 'SYSTEM_ADMIN');

/** A context for work that runs outside a request (jobs, scripts, tests): the system clock unless given. */
export function serviceContext(parts: Omit<ServiceContext, 'clock' | 'authSession'> & { clock?: Clock }): ServiceContext {
  return { ...parts, authSession: null, clock: parts.clock ?? systemClock };
}

/**
 * The `X-Session-Id` header of the operations whose territory may come from the session's selection (the OpenAPI
 * `requestHeaders` of their procedures; the services read it from the context).
 */
export const sessionTerritoryHeader = z.object({
  'X-Session-Id': z.string().min(1).optional().describe('Session whose selected territory applies when territoryId is absent.'),
});
