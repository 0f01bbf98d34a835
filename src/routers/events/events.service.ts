import { type EntityManager, LockMode } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { Event, type EventStatus, type ParticipationStatus } from '../../entities/event.entity.js';
import type { MembershipRole } from '../../entities/membership.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { conflict, forbidden, notFound, validationFailed } from '../../platform/problems.js';
import type { Clock, ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { createSystemPost } from '../feed/feed.service.js';
import { assertAttachable, attachMedia, mediaUrlsOf } from '../media/media.service.js';
import { residentsQuery } from '../memberships/memberships.queries.js';
import { enforceModerationRules } from '../moderation-rules/moderation-rules.service.js';
import { enqueueNotificationTo } from '../notifications/outbox.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';
import {
  eventByIdQuery,
  type EventRow,
  nearbyEventsCountQuery,
  nearbyEventsQuery,
  type NearbyEventsParams,
  territoryEventsCountQuery,
  territoryEventsQuery,
} from './events.queries.js';
import type { CreateEventInput, EventListFilter, EventOutput, NearbyEventOutput } from './events.schemas.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

/** How far back a start may lie: events may be recorded (or adjusted) up to one year after they began. */
const MAX_PAST_START_MS = 365 * 24 * 3600 * 1000;

function toOutput(r: EventRow, mediaUrls: string[]): EventOutput {
  return {
    id: r.id,
    territoryId: r.territory_id,
    title: r.title,
    description: r.description,
    startsAtUtc: r.starts_at_utc,
    endsAtUtc: r.ends_at_utc,
    latitude: r.latitude,
    longitude: r.longitude,
    locationLabel: r.location_label,
    coverMediaId: r.cover_media_id,
    additionalMediaIds: r.additional_media_ids ?? [],
    mediaUrls,
    status: r.status as EventStatus,
    createdByUserId: r.created_by_user_id,
    createdByMembership: r.created_by_membership as MembershipRole,
    interestedCount: r.interested_count,
    confirmedCount: r.confirmed_count,
    myParticipation: (r.my_participation as ParticipationStatus | null) ?? null,
    postId: r.post_id,
    createdAtUtc: r.created_at_utc,
  };
}

/** Rows to outputs, with the media URLs of all of them read in one query. */
async function withMedia<R extends EventRow>(source: HotReadSource, rows: R[]): Promise<Array<{ row: R; event: EventOutput }>> {
  const urls = await mediaUrlsOf(
    source,
    'EVENT',
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({ row, event: toOutput(row, urls.get(row.id) ?? []) }));
}

/** An event by its key (prepared); after a write, given the request's context, on the pool. */
async function loadEvent(source: HotReadSource, id: string, viewerId: string): Promise<EventOutput> {
  const [row] = await runHotRead<EventRow>(source, eventByIdQuery(id, viewerId), { prepared: true });
  if (!row) throw notFound('Event');
  const [out] = await withMedia(source, [row]);
  return out!.event;
}

function checkDates(clock: Clock, startsAt: Date, endsAt: Date | null | undefined) {
  if (startsAt.getTime() < clock.now().getTime() - MAX_PAST_START_MS) {
    throw validationFailed('startsAtUtc', 'must be in the future or at most one year in the past');
  }
  if (endsAt && endsAt.getTime() <= startsAt.getTime()) throw validationFailed('endsAtUtc', 'must be after startsAtUtc');
}

/**
 * Whether this creation may notify the territory's residents: a creator's first `Events:NotifyingCreationsPerDay`
 * events in a territory within 24 hours do, later ones are created silently, so nobody can flood every resident
 * with their text. Counted under a per-(creator, territory) lock, before this event is written.
 */
async function mayNotify(tx: EntityManager, userId: string, territoryId: string, now: Date): Promise<boolean> {
  await execSql(tx, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [`event-notify:${userId}:${territoryId}`]);
  const limit = await readConfigNumber(tx, 'Events:NotifyingCreationsPerDay', 3);
  const [row] = await execSql<{ n: number }>(
    tx,
    'select count(*)::int as n from event where created_by_user_id = ? and territory_id = ? and created_at_utc > ?',
    [userId, territoryId, new Date(now.getTime() - 86_400_000)],
  );
  return (row?.n ?? 0) < limit;
}

/**
 * A member (VISITOR or RESIDENT) of the territory creates a SCHEDULED event, subject to the territory's active
 * moderation rules as its feed post is. In one transaction: the event with the creator's role, its media (cover
 * first), an EVENT feed post referencing it, and an EVENT_CREATED notification to the territory's residents.
 */
export async function createEvent(ctx: ServiceContext, input: CreateEventInput): Promise<EventOutput> {
  const access = await requireTerritory(ctx, input.territoryId, {
    as: 'member',
    creates: true,
    denied: { message: 'Only members (visitors or residents) of this territory can create events.', code: 'NOT_MEMBER' },
  });
  const { em, user } = ctx;
  const territoryId = access.territoryId;
  const role: MembershipRole = access.role!;
  checkDates(ctx.clock, input.startsAtUtc, input.endsAtUtc);
  // The event becomes an EVENT feed post: the community's content rules apply to it as to any post.
  await enforceModerationRules(em, territoryId, { title: input.title, content: input.description ?? '', type: 'EVENT', locationLabel: input.locationLabel });

  const eventId = await em.transactional(async (tx) => {
    const notify = await mayNotify(tx, user.id, territoryId, ctx.clock.now());
    const hasMedia = Boolean(input.coverMediaId) || input.additionalMediaIds.length > 0;
    const media = hasMedia
      ? await assertAttachable(tx, {
          userId: user.id,
          territoryId,
          target: 'events',
          mediaIds: input.additionalMediaIds,
          coverMediaId: input.coverMediaId ?? null,
        })
      : [];
    const event = tx.create(Event, {
      id: newId(),
      territoryId,
      title: input.title,
      description: input.description,
      startsAtUtc: input.startsAtUtc,
      endsAtUtc: input.endsAtUtc ?? null,
      latitude: input.latitude,
      longitude: input.longitude,
      locationLabel: input.locationLabel,
      coverMediaId: input.coverMediaId ?? null,
      additionalMediaIds: input.additionalMediaIds,
      status: 'SCHEDULED',
      createdByUserId: user.id,
      createdByMembership: role,
      postId: null,
      cancelledAtUtc: null,
    });
    if (media.length > 0) attachMedia(tx, { ownerType: 'EVENT', ownerId: event.id, mediaIds: media.map((m) => m.id) });
    const post = await createSystemPost(tx, {
      territoryId,
      authorUserId: user.id,
      title: input.title,
      content: input.description ?? input.title,
      type: 'EVENT',
      visibility: 'PUBLIC',
      status: 'PUBLISHED',
      eventId: event.id,
    });
    event.postId = post.id;
    if (notify) {
      await enqueueNotificationTo(tx, residentsQuery(territoryId, user.id), {
        type: 'EVENT_CREATED',
        title: `New event: ${input.title}`,
        body: input.locationLabel ? `${input.startsAtUtc.toISOString()} at ${input.locationLabel}` : input.startsAtUtc.toISOString(),
        data: { territoryId, eventId: event.id, postId: post.id },
        sourceKey: `event:${event.id}:created`,
      });
    }
    await tx.flush();
    return event.id;
  });
  return loadEvent(em, eventId, user.id);
}

export async function getEvent(ctx: ServiceContext, input: { eventId: string }): Promise<EventOutput> {
  return loadEvent(ctx, input.eventId, ctx.user.id);
}

/** The territory a listing reads: explicit or the session's, ACTIVE (events of any territory are public). */
async function listedTerritory(ctx: ServiceContext, filter: EventListFilter) {
  const { territoryId } = await requireTerritory(ctx, filter.territoryId);
  if (filter.startDate && filter.endDate && filter.endDate < filter.startDate) throw validationFailed('endDate', 'must not be before startDate');
  return { territoryId, startDate: filter.startDate, endDate: filter.endDate };
}

export async function listEvents(ctx: ServiceContext, input: EventListFilter & { skip: number; take: number }): Promise<EventOutput[]> {
  const filter = await listedTerritory(ctx, input);
  const rows = await runHotRead<EventRow>(
    ctx,
    territoryEventsQuery({ ...filter, viewerId: ctx.user.id, now: ctx.clock.now(), offset: input.skip, limit: input.take }),
  );
  return (await withMedia(ctx, rows)).map((x) => x.event);
}

export async function pageEvents(ctx: ServiceContext, input: EventListFilter & { pageNumber: number; pageSize: number }) {
  const filter = await listedTerritory(ctx, input);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [rows, count] = await Promise.all([
    runHotRead<EventRow>(ctx, territoryEventsQuery({ ...filter, viewerId: ctx.user.id, now: ctx.clock.now(), offset, limit })),
    runHotRead<{ total: number }>(ctx, territoryEventsCountQuery(filter)),
  ]);
  const items = (await withMedia(ctx, rows)).map((x) => x.event);
  return toPage(items, count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

type NearbyRow = EventRow & { distance_km: number };
const roundKm = (km: number) => Math.round(km * 1000) / 1000;

async function nearbyRows(source: HotReadSource, viewerId: string, point: NearbyEventsParams, offset: number, limit: number): Promise<NearbyEventOutput[]> {
  const rows = await runHotRead<NearbyRow>(source, nearbyEventsQuery({ ...point, viewerId, offset, limit }), { prepared: true });
  return (await withMedia(source, rows)).map(({ row, event }) => ({ ...event, distanceKm: roundKm(row.distance_km) }));
}

/** SCHEDULED events not over yet, of ACTIVE territories, within `radiusKm`; nearest first. */
export async function nearbyEvents(ctx: ServiceContext, input: { lat: number; lng: number; radiusKm: number; limit: number }) {
  return nearbyRows(ctx, ctx.user.id, { lat: input.lat, lng: input.lng, radiusKm: input.radiusKm, now: ctx.clock.now() }, 0, input.limit);
}

export async function pageNearbyEvents(ctx: ServiceContext, input: { lat: number; lng: number; radiusKm: number; pageNumber: number; pageSize: number }) {
  const point = { lat: input.lat, lng: input.lng, radiusKm: input.radiusKm, now: ctx.clock.now() };
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [items, count] = await Promise.all([
    nearbyRows(ctx, ctx.user.id, point, offset, limit),
    runHotRead<{ total: number }>(ctx, nearbyEventsCountQuery(point)),
  ]);
  return toPage(items, count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

/**
 * Sets the caller's participation (INTEREST or CONFIRMED) on an event; repeated calls upsert the one row. Any
 * signed-in user may take part (events are public); a cancelled event takes no new participation (409).
 */
export async function participate(ctx: ServiceContext, input: { eventId: string; status: ParticipationStatus }): Promise<EventOutput> {
  const { em, user } = ctx;
  const { eventId, status } = input;
  await em.transactional(async (tx) => {
    // The status is read under a share lock of the event row, held until the participation commits: a cancel's
    // update waits for it, and it waits for a cancel in progress (then reads CANCELLED), so no participation lands
    // on an event cancelled meanwhile. Participations of different users share the lock.
    const event = await tx.findOne(Event, { id: eventId }, { lockMode: LockMode.PESSIMISTIC_READ, refresh: true });
    if (!event) throw notFound('Event');
    if (event.status === 'CANCELLED') throw conflict('The event is cancelled.', 'EVENT_CANCELLED');
    const now = ctx.clock.now();
    // One statement, so concurrent calls of the same user cannot collide on the primary key.
    await execSql(
      tx,
      `insert into event_participation (event_id, user_id, status, created_at_utc, updated_at_utc) values (?, ?, ?, ?, ?)
       on conflict (event_id, user_id) do update set status = excluded.status, updated_at_utc = excluded.updated_at_utc`,
      [eventId, user.id, status, now, now],
    );
  });
  return loadEvent(em, eventId, user.id);
}

/**
 * Only the creator cancels; no notification is sent. Cancelling a cancelled event is a no-op answering the event
 * (idempotent, so a retried request is harmless).
 */
export async function cancelEvent(ctx: ServiceContext, input: { eventId: string }): Promise<EventOutput> {
  const { em, user } = ctx;
  const { eventId } = input;
  await em.transactional(async (tx) => {
    const event = await tx.findOne(Event, { id: eventId });
    if (!event) throw notFound('Event');
    if (event.createdByUserId !== user.id) throw forbidden('Only the creator of the event can cancel it.', 'NOT_EVENT_CREATOR');
    if (event.status === 'CANCELLED') return;
    event.status = 'CANCELLED';
    event.cancelledAtUtc = ctx.clock.now();
    audit(tx, { actorUserId: user.id, action: 'event.cancelled', subjectType: 'Event', subjectId: event.id, territoryId: event.territoryId });
  });
  return loadEvent(em, eventId, user.id);
}

/** Account deletion: the user's participations go (the events they created stay, under the anonymised name). */
export const eraseParticipations: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from event_participation where user_id = ?', [userId]);
};
