/**
 * SQL of the event read paths (by id, territory list, nearby), explicit columns and `?` placeholders, run
 * with src/db/sql.ts `runSql`; a benchmark baseline can run the same text through
 * `toNumberedParams`. Filters match the indexes declared on the Event entities (the nearby query's literal
 * `status = 'SCHEDULED'` is what lets the partial GiST index apply).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn, type SqlQuery } from '../../db/sql.js';
import { haversineSql } from '../../platform/geo.js';
import type { AuthUser } from '../../platform/service-context.js';
import { blockedUserIdsOf } from '../blocks/blocks.queries.js';
import { nearbyBoxes } from '../territories/territories.queries.js';

/** A row of the queries below; timestamps are already ISO 8601 UTC strings. */
export interface EventRow {
  id: string;
  territory_id: string;
  title: string;
  description: string | null;
  starts_at_utc: string;
  ends_at_utc: string | null;
  latitude: number;
  longitude: number;
  location_label: string | null;
  cover_media_id: string | null;
  additional_media_ids: string[];
  status: string;
  created_by_user_id: string;
  created_by_membership: string;
  post_id: string | null;
  created_at_utc: string;
  interested_count: number;
  confirmed_count: number;
  my_participation: string | null;
}

/** The event's own columns, its participation counts and the viewer's participation (one `?`: the viewer's id). */
const COLUMNS = `e.id, e.territory_id, e.title, e.description, ${isoColumn('e.starts_at_utc')} as starts_at_utc,
  ${isoColumn('e.ends_at_utc')} as ends_at_utc, e.latitude, e.longitude, e.location_label, e.cover_media_id,
  e.additional_media_ids, e.status, e.created_by_user_id, e.created_by_membership, e.post_id,
  ${isoColumn('e.created_at_utc')} as created_at_utc,
  (select count(*) from event_participation ep where ep.event_id = e.id and ep.status = 'INTEREST')::int as interested_count,
  (select count(*) from event_participation ep where ep.event_id = e.id and ep.status = 'CONFIRMED')::int as confirmed_count,
  (select ep.status from event_participation ep where ep.event_id = e.id and ep.user_id = ?::uuid) as my_participation`;

/** When an event is over: its end, or its start when it has none. */
const ENDS = 'coalesce(e.ends_at_utc, e.starts_at_utc)';

export function eventByIdQuery(id: string, viewerId: string): SqlQuery {
  return { sql: `select ${COLUMNS} from event e where e.id = ?::uuid`, params: [viewerId, id] };
}

export interface TerritoryEventsFilter {
  territoryId: string;
  /** Events not over before this instant. */
  startDate?: Date | undefined;
  /** Events starting at or before this instant. */
  endDate?: Date | undefined;
}

function territoryWhere(filter: TerritoryEventsFilter): SqlQuery {
  const parts = ['e.territory_id = ?::uuid'];
  const params: unknown[] = [filter.territoryId];
  if (filter.startDate) {
    parts.push(`${ENDS} >= ?::timestamptz`);
    params.push(filter.startDate);
  }
  if (filter.endDate) {
    parts.push('e.starts_at_utc <= ?::timestamptz');
    params.push(filter.endDate);
  }
  return { sql: parts.join(' and '), params };
}

/**
 * A territory's events, upcoming first: those not over yet by start time (soonest first), then past ones, most
 * recent first. Cancelled events stay listed with their status. The page is cut from the events' keys first (a narrow
 * sort), then only its rows are read whole and get their columns (each row's participation counts and the viewer's
 * participation: three probes, which ran for every row the offset skipped too). Sorting the whole rows of a territory
 * of 5,000 events took 12.9 ms of PostgreSQL CPU a page, its keys 3.2.
 */
export function territoryEventsQuery(filter: TerritoryEventsFilter & { viewerId: string; now: Date; offset: number; limit: number }): SqlQuery {
  const where = territoryWhere(filter);
  return {
    sql: `select ${COLUMNS} from (
        select e.id, ${ENDS} < ?::timestamptz as over, case when ${ENDS} >= ?::timestamptz then e.starts_at_utc end as upcoming_at, e.starts_at_utc
          from event e where ${where.sql}
         order by over, upcoming_at, e.starts_at_utc desc, e.id offset ?::int limit ?::int
      ) k join event e on e.id = k.id
      order by k.over, k.upcoming_at, k.starts_at_utc desc, k.id`,
    params: [filter.viewerId, filter.now, filter.now, ...where.params, filter.offset, filter.limit],
  };
}

export function territoryEventsCountQuery(filter: TerritoryEventsFilter): SqlQuery {
  const where = territoryWhere(filter);
  return { sql: `select count(*)::int as total from event e where ${where.sql}`, params: where.params };
}

export interface NearbyEventsParams {
  lat: number;
  lng: number;
  radiusKm: number;
  /** Events over before this instant are left out. */
  now: Date;
}

/**
 * Ids and distances of the SCHEDULED, not yet over events of ACTIVE territories within the radius: GiST box
 * prefilter, then the exact haversine filter.
 */
function nearbyIds({ lat, lng, radiusKm, now }: NearbyEventsParams): SqlQuery {
  const boxes = nearbyBoxes(lat, lng, radiusKm);
  const inBox = boxes.map(() => `point(e.longitude, e.latitude) <@ box(point(?::float8, ?::float8), point(?::float8, ?::float8))`).join(' or ');
  const sql = `select d.id, d.distance_km from (
      select e.id, ${haversineSql('c.lat', 'c.lng', 'e.latitude', 'e.longitude')} as distance_km
        from event e
        join territory t on t.id = e.territory_id and t.status = 'ACTIVE',
        (select ?::float8 as lat, ?::float8 as lng) c
       where e.status = 'SCHEDULED' and ${ENDS} >= ?::timestamptz and (${inBox})
    ) d where d.distance_km <= ?::float8`;
  return { sql, params: [lat, lng, now, ...boxes.flatMap((b) => [b.minLng, b.minLat, b.maxLng, b.maxLat]), radiusKm] };
}

/**
 * Nearby events, nearest first (ties by id), each with `distance_km`; counts are computed for the page only. Run
 * named (`nearbyRows`): PostgreSQL estimates the box (`contsel`), the distance and the end time the same with or
 * without their values, so the generic plan is the custom one (the GiST index, the page's rows, then their events)
 * and is kept: planning was ~0.7 of a call's ~1.4 ms of PostgreSQL CPU on the bench's data (bench/PROFILE.md,
 * seventeenth pass).
 */
export function nearbyEventsQuery(params: NearbyEventsParams & { viewerId: string; offset: number; limit: number }): SqlQuery {
  const ids = nearbyIds(params);
  return {
    sql: `select ${COLUMNS}, n.distance_km
      from (${ids.sql} order by d.distance_km, d.id offset ?::int limit ?::int) n
      join event e on e.id = n.id
      order by n.distance_km, n.id`,
    params: [params.viewerId, ...ids.params, params.offset, params.limit],
  };
}

export function nearbyEventsCountQuery(params: NearbyEventsParams): SqlQuery {
  const ids = nearbyIds(params);
  return { sql: `select count(*)::int as total from (${ids.sql}) n`, params: ids.params };
}

/** Events are public to every signed-in user; the viewer only loses those of users they blocked (media rule 4). */
export async function canSeeEvent(em: EntityManager, viewer: AuthUser, eventId: string): Promise<boolean> {
  const [event] = await execSql<{ created_by_user_id: string }>(em, 'select created_by_user_id from event where id = ?', [eventId]);
  return event !== undefined && !(await blockedUserIdsOf(em, viewer.id)).includes(event.created_by_user_id);
}
