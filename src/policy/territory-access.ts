/**
 * "What is this caller in this territory?", answered once. Every service method that acts in a territory opens with
 * `requireTerritory(ctx, territoryId, {as, flag})`: one query (territory + the caller's membership), then the same
 * refusals everywhere, in the same order:
 *   1. no territory id and nothing selected for the session: 404 NO_TERRITORY_SELECTED;
 *   2. unknown territory, or not ACTIVE: 404 NOT_FOUND. `status: 'VISIBLE'` also admits a PENDING or REJECTED
 *      territory to those who may see it (its suggester, its capability holders, system admins), so administering
 *      a suggestion reveals nothing to anyone else; `status: 'ANY'` admits every status (internal reads);
 *   3. `flag` off: the flag's error (404 MARKETPLACE_DISABLED, 404 CHAT_DISABLED...): a switched-off domain does
 *      not exist there, for anyone (the flags themselves are public);
 *   4. `as` not met: 403 (the requirement's code, e.g. NOT_MEMBER, NOT_RESIDENT, or the operation's own).
 *   5. `creates: true` and the caller is under a posting restriction here (a moderation sanction): 403
 *      POSTING_RESTRICTED until it ends. The restriction is part of the same query, so creating content keeps one check.
 * SYSTEM_ADMIN holds every territory capability (DESIGN section 5); it is no member unless it has a membership.
 */
import type { MembershipRole, TerritoryCapability } from '../entities/membership.entity.js';
import type { TerritoryFeatureFlag } from '../entities/territory.entity.js';
import { runHotRead } from '../db/sql.js';
import { AppError, forbidden, notFound, type ProblemCode } from '../platform/problems.js';
import { type AuthUser, isSystemAdmin, type PublicServiceContext } from '../platform/service-context.js';
import { type TerritoryAccessRow, territoryAccessQuery } from './access.queries.js';

/**
 * member: VISITOR or RESIDENT; resident: RESIDENT; verifiedResident: RESIDENT with a residency verification;
 * a capability: holds it (SYSTEM_ADMIN holds all).
 */
export type TerritoryRole = 'member' | 'resident' | 'verifiedResident' | TerritoryCapability;

export interface RequireTerritoryOptions {
  /** Any one of these satisfies the check. Omitted: anyone may act (the territory must still exist). */
  as?: TerritoryRole | readonly TerritoryRole[];
  /** A feature flag the operation needs. */
  flag?: TerritoryFeatureFlag;
  /**
   * ACTIVE (default) for content; VISIBLE for administering the territory itself (others' PENDING or REJECTED
   * territories stay 404); ANY for internal reads of a territory already known to exist (a post's, an asset's).
   */
  status?: 'ACTIVE' | 'VISIBLE' | 'ANY';
  /** The operation creates content (posts, events, items, messages): a posting restriction here refuses it. */
  creates?: boolean;
  /** The 403 of an unmet `as`, when the operation words it its own way. */
  denied?: { message: string; code?: ProblemCode };
  /** Also read whether the caller has HIDDEN posts here (`hasOwnHiddenPosts`; the feed). */
  ownHiddenPosts?: boolean;
}

export interface TerritoryMembershipFacts {
  id: string;
  role: MembershipRole;
  capabilities: TerritoryCapability[];
  geoVerified: boolean;
  documentVerified: boolean;
}

export interface TerritoryFacts {
  id: string;
  name: string;
  status: string;
  enabledFlags: string[];
  latitude: number;
  longitude: number;
  radiusKm: number;
}

export class TerritoryAccess {
  constructor(
    readonly territory: TerritoryFacts,
    readonly membership: TerritoryMembershipFacts | null,
    readonly caller: AuthUser | null,
    /** The end of the caller's posting restriction in this territory (null: none). */
    readonly postingRestrictedUntil: Date | null = null,
    /** Whom the caller blocked: lists leave out what they made (read with the access, no round trip of its own). */
    readonly blockedUserIds: readonly string[] = [],
    /** Whether the caller has HIDDEN posts here: read only when asked (RequireTerritoryOptions.ownHiddenPosts). */
    readonly hasOwnHiddenPosts = false,
  ) {}

  get territoryId() {
    return this.territory.id;
  }
  get role(): MembershipRole | null {
    return this.membership?.role ?? null;
  }
  get isMember() {
    return this.membership !== null;
  }
  get isResident() {
    return this.membership?.role === 'RESIDENT';
  }
  get isVerifiedResident() {
    return this.isResident && (this.membership!.geoVerified || this.membership!.documentVerified);
  }
  get isSystemAdmin() {
    return isSystemAdmin(this.caller);
  }
  /** Holds one of the capabilities here (SYSTEM_ADMIN holds them all). */
  holds(...capabilities: TerritoryCapability[]) {
    return this.isSystemAdmin || capabilities.some((c) => this.membership?.capabilities.includes(c));
  }
  /**
   * Rule 4: everyone sees PUBLIC content; residents also RESIDENTS_ONLY content. Curators and moderators of the
   * territory and system admins see what residents see (they moderate it).
   */
  get seesResidentsOnly() {
    return this.isResident || (this.membership?.capabilities.length ?? 0) > 0 || this.isSystemAdmin;
  }
  hasFlag(flag: TerritoryFeatureFlag) {
    return this.territory.enabledFlags.includes(flag);
  }
  /** Whether the caller meets any one of the roles. */
  is(...roles: TerritoryRole[]) {
    return roles.some((role) => {
      switch (role) {
        case 'member':
          return this.isMember;
        case 'resident':
          return this.isResident;
        case 'verifiedResident':
          return this.isVerifiedResident;
        default:
          return this.holds(role);
      }
    });
  }
}

const ROLE_REFUSALS: Record<'member' | 'resident' | 'verifiedResident', { message: string; code: ProblemCode }> = {
  member: { message: 'Only members of this territory can do this.', code: 'NOT_MEMBER' },
  resident: { message: 'Only residents of this territory can do this.', code: 'NOT_RESIDENT' },
  verifiedResident: { message: 'Only verified residents of this territory can do this.', code: 'NOT_VERIFIED_RESIDENT' },
};

/**
 * The refusal of a disabled flag: the marketplace, chat and alerts answer 404 as if they did not exist there (DESIGN
 * sections 13 and 14; the spec: alerts work only when AlertPosts is enabled); any other switched-off feature is a 403
 * naming its flag.
 */
function flagRefusal(flag: TerritoryFeatureFlag): AppError {
  if (flag === 'MARKETPLACEENABLED') return notFound('Marketplace of this territory', 'MARKETPLACE_DISABLED');
  if (flag.startsWith('CHAT')) return notFound('Chat of this territory', 'CHAT_DISABLED');
  if (flag === 'ALERTPOSTS') return new AppError('NOT_FOUND', 'ALERTS_DISABLED', 'Alerts are not enabled in this territory (feature flag ALERTPOSTS).');
  return new AppError('FORBIDDEN', 'FEATURE_DISABLED', `This territory has not enabled ${flag}.`);
}

function refusalOf(roles: readonly TerritoryRole[]) {
  const [first] = roles;
  if (roles.length === 1 && first && first in ROLE_REFUSALS) return ROLE_REFUSALS[first as keyof typeof ROLE_REFUSALS];
  const capabilities = roles.filter((r): r is TerritoryCapability => r === 'CURATOR' || r === 'MODERATOR');
  if (capabilities.length === roles.length)
    return { message: `This operation requires ${capabilities.join(' or ')} in this territory.`, code: 'FORBIDDEN' as const };
  return { message: 'You are not allowed to do this in this territory.', code: 'FORBIDDEN' as const };
}

function toAccess(row: TerritoryAccessRow, caller: AuthUser | null): TerritoryAccess {
  const role = row.role === 'VISITOR' || row.role === 'RESIDENT' ? row.role : null;
  const membership: TerritoryMembershipFacts | null =
    row.membership_id && role
      ? {
          id: row.membership_id,
          role,
          capabilities: (row.capabilities ?? []) as TerritoryCapability[],
          geoVerified: row.geo_verified === true,
          documentVerified: row.document_verified === true,
        }
      : null;
  return new TerritoryAccess(
    {
      id: row.id!,
      name: row.name!,
      status: row.status!,
      enabledFlags: row.enabled_flags ?? [],
      latitude: Number(row.latitude),
      longitude: Number(row.longitude),
      radiusKm: Number(row.radius_km),
    },
    membership,
    caller,
    row.posting_restricted_until ? new Date(row.posting_restricted_until) : null,
    row.blocked_user_ids ?? [],
    row.has_own_hidden_posts === true,
  );
}

/** Whether the territory's status lets the caller reach it (see RequireTerritoryOptions.status). */
function admits(status: 'ACTIVE' | 'VISIBLE' | 'ANY', row: TerritoryAccessRow, access: TerritoryAccess): boolean {
  if (status === 'ANY' || row.status === 'ACTIVE') return true;
  if (status === 'ACTIVE') return false;
  if (row.status === 'INACTIVE') return true;
  const caller = access.caller;
  return caller !== null && (row.suggested_by_user_id === caller.id || access.isSystemAdmin || (access.membership?.capabilities.length ?? 0) > 0);
}

export const noTerritorySelected = () => new AppError('NOT_FOUND', 'NO_TERRITORY_SELECTED', 'No territory selected.');

/**
 * The territory (the given id, else the session's selection) and what the caller is there, after the checks of
 * `opts` (see the top of this file for their order). Reads only: locks belong to the writer that needs them.
 */
export async function requireTerritory(
  ctx: Pick<PublicServiceContext, 'em' | 'user' | 'sessionId'>,
  territoryId: string | null | undefined,
  opts: RequireTerritoryOptions = {},
): Promise<TerritoryAccess> {
  const userId = ctx.user?.id ?? null;
  const [row] = await runHotRead<TerritoryAccessRow>(
    ctx,
    territoryAccessQuery(territoryId ?? null, userId, userId ? ctx.sessionId : null, opts.ownHiddenPosts === true && userId !== null),
    { prepared: true },
  );
  if (!row?.target_id) throw noTerritorySelected();
  if (!row.id) throw notFound('Territory');
  const access = toAccess(row, ctx.user);
  if (!admits(opts.status ?? 'ACTIVE', row, access)) throw notFound('Territory');
  if (opts.flag && !access.hasFlag(opts.flag)) throw flagRefusal(opts.flag);
  if (opts.as !== undefined) {
    const roles: readonly TerritoryRole[] = typeof opts.as === 'string' ? [opts.as] : opts.as;
    if (!access.is(...roles)) {
      const refusal = opts.denied ?? refusalOf(roles);
      throw forbidden(refusal.message, refusal.code);
    }
  }
  if (opts.creates) refusePostingRestricted(access);
  return access;
}

/** 403 POSTING_RESTRICTED while a moderation sanction keeps the caller from creating content in this territory. */
export function refusePostingRestricted(access: TerritoryAccess) {
  if (access.postingRestrictedUntil) {
    throw forbidden(`You are restricted from posting in this territory until ${access.postingRestrictedUntil.toISOString()}.`, 'POSTING_RESTRICTED');
  }
}
