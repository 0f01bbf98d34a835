import type { FastifyRequest } from 'fastify';
import type { SystemPermission } from '../entities/user.entity.js';
import { forbidden, unauthorized } from '../platform/problems.js';
import { hasPermission } from '../platform/service-context.js';
import type { AuthUser } from '../platform/service-context.js';

/** Plain Fastify routes (uploads, downloads): the caller set by the auth plugin, or a 401 with the token's problem. */
export function requireUser(request: FastifyRequest): AuthUser {
  const user = request.auth?.user;
  if (!user) throw unauthorized(request.auth?.error ?? undefined);
  return user;
}

/** Plain-route counterpart of `permissionProcedure`: same 401/403 answers. */
export function requirePermission(request: FastifyRequest, ...permissions: SystemPermission[]): AuthUser {
  const user = requireUser(request);
  if (!hasPermission(user, ...permissions)) throw forbidden(`This operation requires ${permissions.join(' or ')}.`);
  return user;
}
