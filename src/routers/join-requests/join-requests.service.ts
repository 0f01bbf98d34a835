import { type EntityManager, type InferEntity, LockMode } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, isoValue, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { JoinRequest, JoinRequestRecipient, type JoinRequestStatus } from '../../entities/join-request.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { conflict, forbidden, notFound, tooManyRequests } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { type MembershipFacts, membershipsOfQuery, residentTerritoryIdsOf } from '../memberships/memberships.queries.js';
import { grantResidency } from '../memberships/residency.js';
import { enqueueNotification } from '../notifications/outbox.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';
import {
  type IncomingFilter,
  incomingCountQuery,
  incomingQuery,
  type JoinRequestFacts,
  joinRequestByIdQuery,
  recipientsOfQuery,
} from './join-requests.queries.js';
import type { JoinRequestOutput } from './join-requests.schemas.js';
import { canDecide, canView, resolveRecipients } from './recipients.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

/** A request as an entity (writes) or as a row read on the pool (reads). */
type JoinRequestFields =
  | Pick<InferEntity<typeof JoinRequest>, 'id' | 'territoryId' | 'requesterUserId' | 'message' | 'status' | 'createdAtUtc' | 'decidedAtUtc' | 'decidedByUserId'>
  | JoinRequestFacts;

export const TRANSFER_HINT = 'Use POST /api/v1/memberships/transfer-residency to transfer your residency.';

function toOutput(r: JoinRequestFields, recipientUserIds: string[]): JoinRequestOutput {
  return {
    id: r.id,
    territoryId: r.territoryId,
    requesterUserId: r.requesterUserId,
    recipientUserIds,
    message: r.message ?? null,
    status: r.status,
    createdAtUtc: isoValue(r.createdAtUtc)!,
    decidedAtUtc: isoValue(r.decidedAtUtc),
    decidedByUserId: r.decidedByUserId ?? null,
  };
}

async function recipientsOf(source: HotReadSource, joinRequestIds: string[]): Promise<Map<string, string[]>> {
  const byRequest = new Map<string, string[]>(joinRequestIds.map((id) => [id, []]));
  if (joinRequestIds.length === 0) return byRequest;
  const rows = await runHotRead<{ join_request_id: string; recipient_user_id: string }>(source, recipientsOfQuery(joinRequestIds));
  for (const row of rows) byRequest.get(row.join_request_id)?.push(row.recipient_user_id);
  return byRequest;
}

/**
 * The request as `viewerId` may see it. Its requester never sees who it was addressed to: the fallback to curators
 * and then to every system admin, and the filtering of named recipients, would otherwise tell anyone who holds
 * which role (finding 11). Recipients, curators and admins see the list.
 */
async function withRecipients(source: HotReadSource, r: JoinRequestFields, viewerId: string) {
  return toOutput(r, viewerId === r.requesterUserId ? [] : ((await recipientsOf(source, [r.id])).get(r.id) ?? []));
}

/** Transaction-scoped advisory lock on a text key: serializes the callers that share it, released at commit. */
const lockKey = (em: EntityManager, key: string) => execSql(em, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [key]);

export interface CreateJoinRequest {
  territoryId: string;
  recipientUserIds?: string[] | null;
  message?: string | null;
  /** Made by transfer-residency: the requester may be RESIDENT elsewhere; approval moves the residency. */
  transfer?: boolean;
}

/**
 * Creates a PENDING join request, or returns the caller's pending one for the territory (`created: false`).
 * Creations (cancelled ones included) are limited per user and territory within a window, counted in the
 * database under a per-(user, territory) advisory lock so concurrent calls cannot overshoot the limit.
 */
export async function createJoinRequest(ctx: ServiceContext, input: CreateJoinRequest) {
  const { em, user } = ctx;
  return em.transactional(async (tx) => {
    await requireTerritory({ ...ctx, em: tx }, input.territoryId);
    const residentIn = await residentTerritoryIdsOf(tx, user.id);
    if (residentIn.includes(input.territoryId)) throw conflict('You are already RESIDENT of this territory.', 'ALREADY_RESIDENT');
    if (input.transfer && residentIn.length === 0) {
      throw conflict('You hold no RESIDENT membership to transfer; use become-resident instead.', 'NOT_RESIDENT');
    }
    if (!input.transfer && residentIn.length > 0) {
      throw conflict(`You are already RESIDENT of another territory and must transfer your residency. ${TRANSFER_HINT}`, 'RESIDENT_ELSEWHERE');
    }

    await lockKey(tx, `join-request:${user.id}:${input.territoryId}`);
    const pending = await tx.findOne(JoinRequest, { territoryId: input.territoryId, requesterUserId: user.id, status: 'PENDING' });
    if (pending) {
      // Asking to transfer while a plain request is pending turns it into a transfer request.
      if (input.transfer && !pending.isTransfer) pending.isTransfer = true;
      await tx.flush();
      return { created: false, joinRequest: await withRecipients(tx, pending, user.id) };
    }

    const windowHours = await readConfigNumber(tx, 'JoinRequests:WindowHours', 24);
    const maxCreations = await readConfigNumber(tx, 'JoinRequests:MaxCreationsPerWindow', 3);
    const since = new Date(ctx.clock.now().getTime() - windowHours * 3600_000);
    const [counted] = await execSql<{ n: number }>(
      tx,
      'select count(*)::int as n from join_request where requester_user_id = ? and territory_id = ? and created_at_utc > ?',
      [user.id, input.territoryId, since],
    );
    if ((counted?.n ?? 0) >= maxCreations) throw tooManyRequests();

    const recipients = await resolveRecipients(tx, input.territoryId, user.id, input.recipientUserIds ?? []);
    const request = tx.create(JoinRequest, {
      id: newId(),
      territoryId: input.territoryId,
      requesterUserId: user.id,
      message: input.message ?? null,
      status: 'PENDING',
      isTransfer: input.transfer ?? false,
    });
    for (const recipientUserId of recipients) tx.create(JoinRequestRecipient, { joinRequestId: request.id, recipientUserId });
    if (recipients.length > 0) {
      enqueueNotification(tx, {
        type: 'JOIN_REQUEST_RECEIVED',
        recipientUserIds: recipients,
        title: input.transfer ? 'New residency transfer request' : 'New join request',
        body: `${user.displayName} asks to become a resident of your territory.`,
        data: { territoryId: input.territoryId, joinRequestId: request.id, requesterUserId: user.id },
        sourceKey: `join-request:${request.id}:received`,
      });
    }
    await tx.flush();
    return { created: true, joinRequest: toOutput(request, []) };
  });
}

type Decision = Extract<JoinRequestStatus, 'APPROVED' | 'REJECTED'>;

/**
 * Approve or reject, by a still-eligible recipient, a curator of the territory or a system admin (never the requester).
 * The row is locked, so of two concurrent different decisions exactly one wins and the other gets 409;
 * repeating the decision already taken answers the request as it is.
 */
export async function decideJoinRequest(ctx: ServiceContext, input: { id: string; decision: Decision }) {
  const { em, user } = ctx;
  const { id, decision } = input;
  return em.transactional(async (tx) => {
    const request = await tx.findOne(JoinRequest, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!request) throw notFound('Join request');
    if (request.requesterUserId === user.id) throw forbidden('You cannot decide your own join request.');
    if (!(await canDecide({ ...ctx, em: tx }, request))) {
      throw forbidden('Only an eligible recipient (a verified resident), a curator of the territory or a system admin can decide this join request.');
    }
    if (request.status === decision) return withRecipients(tx, request, user.id);
    if (request.status !== 'PENDING') throw conflict(`The join request is already ${request.status}.`, 'JOIN_REQUEST_ALREADY_DECIDED');

    // Approval makes the requester RESIDENT (a transfer moves the residency; see grantResidency).
    const demotedIn =
      decision === 'APPROVED'
        ? await grantResidency(tx, { userId: request.requesterUserId, territoryId: request.territoryId, transfer: request.isTransfer, at: ctx.clock.now() })
        : [];
    request.status = decision;
    request.decidedAtUtc = ctx.clock.now();
    request.decidedByUserId = user.id;
    audit(tx, {
      actorUserId: user.id,
      action: decision === 'APPROVED' ? 'join-request.approved' : 'join-request.rejected',
      subjectType: 'JoinRequest',
      subjectId: request.id,
      territoryId: request.territoryId,
      data: { requesterUserId: request.requesterUserId, transfer: request.isTransfer, demotedInTerritoryIds: demotedIn },
    });
    enqueueNotification(tx, {
      type: 'JOIN_REQUEST_DECIDED',
      recipientUserIds: [request.requesterUserId],
      title: decision === 'APPROVED' ? 'Join request approved' : 'Join request rejected',
      body: decision === 'APPROVED' ? 'You are now a resident of the territory.' : 'Your request to become a resident was rejected.',
      data: { territoryId: request.territoryId, joinRequestId: request.id, status: decision },
      sourceKey: `join-request:${request.id}:decided`,
    });
    await tx.flush();
    return withRecipients(tx, request, user.id);
  });
}

/**
 * One request, for the callers `canView` admits; to anyone else it is 404 so its existence is not revealed. Given the
 * context, every read runs on the pool.
 */
export async function getJoinRequest(ctx: ServiceContext, input: { id: string }) {
  const [request] = await runHotRead<JoinRequestFacts>(ctx, joinRequestByIdQuery(input.id), { prepared: true });
  if (!request || !(await canView(ctx, request))) throw notFound('Join request');
  return withRecipients(ctx, request, ctx.user.id);
}

/** The creator withdraws a PENDING request; cancelling again is idempotent, a decided request is 409. */
export async function cancelJoinRequest(ctx: ServiceContext, input: { id: string }) {
  const { em, user } = ctx;
  return em.transactional(async (tx) => {
    const request = await tx.findOne(JoinRequest, { id: input.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!request) throw notFound('Join request');
    if (request.requesterUserId !== user.id) throw forbidden('Only the creator can cancel this join request.');
    if (request.status === 'CANCELLED') return withRecipients(tx, request, user.id);
    if (request.status !== 'PENDING') throw conflict(`The join request is already ${request.status}.`, 'JOIN_REQUEST_ALREADY_DECIDED');
    request.status = 'CANCELLED';
    request.decidedAtUtc = ctx.clock.now();
    request.decidedByUserId = user.id;
    await tx.flush();
    return withRecipients(tx, request, user.id);
  });
}

/** The caller's incoming filter: the territories where they are CURATOR, from their memberships (on the pool). */
async function incomingFilter(ctx: ServiceContext, status: JoinRequestStatus | undefined): Promise<IncomingFilter> {
  const memberships = await runHotRead<MembershipFacts>(ctx, membershipsOfQuery(ctx.user.id), { prepared: true });
  const curatedTerritoryIds = memberships.filter((m) => m.capabilities?.includes('CURATOR')).map((m) => m.territoryId);
  return { userId: ctx.user.id, curatedTerritoryIds, status };
}

/** A page of the incoming requests, newest first, with their recipients. */
async function incomingPage(ctx: ServiceContext, filter: IncomingFilter, page: { offset: number; limit: number }): Promise<JoinRequestOutput[]> {
  const rows = await runHotRead<JoinRequestFacts>(ctx, incomingQuery(filter, page));
  const recipients = await recipientsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toOutput(r, recipients.get(r.id) ?? []));
}

/** Requests addressed to the caller, or in a territory where the caller is CURATOR (the requester's own excluded). */
export async function listIncoming(ctx: ServiceContext, input: { status?: JoinRequestStatus; skip: number; take: number }) {
  return incomingPage(ctx, await incomingFilter(ctx, input.status), { offset: input.skip, limit: input.take });
}

export async function pageIncoming(ctx: ServiceContext, input: { status?: JoinRequestStatus; pageNumber: number; pageSize: number }) {
  const filter = await incomingFilter(ctx, input.status);
  const [items, [total]] = await Promise.all([
    incomingPage(ctx, filter, pageOffset(input.pageNumber, input.pageSize)),
    runHotRead<{ n: number }>(ctx, incomingCountQuery(filter)),
  ]);
  return toPage(items, total?.n ?? 0, input.pageNumber, input.pageSize);
}

/** Account deletion: the user's pending join requests are cancelled, and they stop being anyone's recipient. */
export const eraseJoinRequests: AccountEraser = async ({ em, userId, at }) => {
  await execSql(em, `update join_request set status = 'CANCELLED', decided_at_utc = ? where requester_user_id = ? and status = 'PENDING'`, [at, userId]);
  await execSql(em, 'delete from join_request_recipient where recipient_user_id = ?', [userId]);
};
