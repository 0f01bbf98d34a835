import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, runHotRead } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { curatorIdsOf, residencyApproversAmong } from '../memberships/memberships.queries.js';
import { storedRecipientQuery } from './join-requests.queries.js';

/** Who checks, and where it reads: the request's context (on the pool), or `{ ...ctx, em: tx }` inside a transaction. */
type Reader = Pick<ServiceContext, 'em' | 'user' | 'sessionId'>;

/**
 * Who a join request is addressed to (rule 3: nobody self-approves, the requester is never a recipient).
 * Of the requested users, only the eligible ones count: verified residents of the territory (RESIDENT with a
 * residency verification), its curators, or a system admin. With none given or none eligible the request goes
 * to the territory's curators; with no curator, to the system admins. Unknown or deleted users are dropped.
 */
export async function resolveRecipients(em: EntityManager, territoryId: string, requesterUserId: string, requested: string[]): Promise<string[]> {
  if (requested.length > 0) {
    const eligible = await residencyApproversAmong(em, territoryId, requesterUserId, requested);
    if (eligible.length > 0) return eligible;
  }
  const curators = await curatorIdsOf(em, territoryId, requesterUserId);
  if (curators.length > 0) return curators;
  const admins = await execSql<{ id: string }>(
    em,
    `select p.user_id as id from user_permission p join app_user u on u.id = p.user_id
      where p.permission = 'SYSTEM_ADMIN' and p.user_id <> ? and u.deleted_at_utc is null`,
    [requesterUserId],
  );
  return admins.map((r) => r.id).sort();
}

const isStoredRecipient = async (source: HotReadSource, joinRequestId: string, userId: string) =>
  (await runHotRead(source, storedRecipientQuery(joinRequestId, userId), { prepared: true })).length > 0;

/** What the reader is in the request's territory (whatever its status). */
const accessTo = (reader: Reader, territoryId: string) => requireTerritory(reader, territoryId, { status: 'ANY' });

/**
 * Who may decide the request now: a system admin, a curator of its territory, or a stored recipient who is still
 * eligible (a verified resident of the territory). Eligibility is re-checked here because it can be lost after
 * the request was addressed (capability revoked, residency moved, verification cleared). The requester is
 * refused by the caller before this check.
 */
export async function canDecide(reader: Reader, request: { id: string; territoryId: string }): Promise<boolean> {
  const access = await accessTo(reader, request.territoryId);
  if (access.holds('CURATOR')) return true;
  return access.isVerifiedResident && (await isStoredRecipient(reader, request.id, reader.user.id));
}

/**
 * Who may read the request: its requester, its stored recipients (even after losing eligibility: they were
 * shown it), curators of its territory and system admins.
 */
export async function canView(reader: Reader, request: { id: string; territoryId: string; requesterUserId: string }): Promise<boolean> {
  if (request.requesterUserId === reader.user.id) return true;
  if ((await accessTo(reader, request.territoryId)).holds('CURATOR')) return true;
  return isStoredRecipient(reader, request.id, reader.user.id);
}
