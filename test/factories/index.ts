import pg from 'pg';
import type { TerritoryCapability, MembershipRole } from '../../src/entities/membership.entity.js';
import type { IdentityVerificationStatus, SystemPermission } from '../../src/entities/user.entity.js';
import { newId } from '../../src/platform/ids.js';
import { signUserToken } from '../../src/platform/jwt.js';
import type { TestApp } from '../setup/test-app.js';

export interface TestUser {
  id: string;
  displayName: string;
  token: string;
  /** `{ authorization: 'Bearer ...' }` for app.inject. */
  headers: { authorization: string };
}

export interface TestTerritory {
  id: string;
  name: string;
  city: string;
  state: string;
  latitude: number;
  longitude: number;
}

/** A well-formed id that names nothing: every "unknown id" test uses it. */
/** A signed-in session for a token the test signs itself (a fresh `sid`, authenticated now). */
export const testSession = (userId: string) => ({ userId, sessionId: newId(), authenticatedAt: new Date() });

export const UNKNOWN_ID = '0190a4f6-0000-7000-8000-000000000000';

let seq = 0;

export async function newUser(
  t: TestApp,
  opts: { permissions?: SystemPermission[]; identity?: IdentityVerificationStatus; displayName?: string } = {},
): Promise<TestUser> {
  const id = newId();
  const displayName = opts.displayName ?? `User ${++seq}`;
  await t.sql(
    `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
     values ($1::uuid, now(), $2, 'test', $1::text, $3)`,
    [id, displayName, opts.identity ?? 'Unverified'],
  );
  for (const permission of opts.permissions ?? []) {
    await t.sql(`insert into user_permission (id, created_at_utc, user_id, permission) values ($1, now(), $2, $3)`, [newId(), id, permission]);
  }
  const { token } = await signUserToken(t.deps.config.jwt, testSession(id));
  return { id, displayName, token, headers: { authorization: `Bearer ${token}` } };
}

export const newAdmin = (t: TestApp) => newUser(t, { permissions: ['SYSTEM_ADMIN'], displayName: `Admin ${++seq}` });

export async function newTerritory(
  t: TestApp,
  opts: Partial<TestTerritory> & { status?: string; flags?: string[]; tags?: string[]; radiusKm?: number } = {},
): Promise<TestTerritory> {
  const territory = {
    id: newId(),
    name: opts.name ?? `Territory ${++seq}`,
    city: opts.city ?? 'Testville',
    state: opts.state ?? 'TS',
    latitude: opts.latitude ?? -23.55,
    longitude: opts.longitude ?? -46.63,
  };
  await t.sql(
    `insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
     values ($1, now(), $2, null, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      territory.id,
      territory.name,
      territory.city,
      territory.state,
      territory.latitude,
      territory.longitude,
      opts.radiusKm ?? 5,
      opts.status ?? 'ACTIVE',
      opts.tags ?? [],
      opts.flags ?? [],
    ],
  );
  return territory;
}

export async function addMembership(
  t: TestApp,
  user: TestUser,
  territory: { id: string },
  opts: { role?: MembershipRole; capabilities?: TerritoryCapability[]; geoVerified?: boolean; documentVerified?: boolean } = {},
) {
  await t.sql(
    `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, capabilities, geo_verified_at_utc, document_verified_at_utc)
     values ($1, now(), $2, $3, $4, $5, $6, $7)
     on conflict (territory_id, user_id) do update set role = excluded.role, capabilities = excluded.capabilities`,
    [
      newId(),
      territory.id,
      user.id,
      opts.role ?? 'VISITOR',
      opts.capabilities ?? [],
      opts.geoVerified ? new Date() : null,
      opts.documentVerified ? new Date() : null,
    ],
  );
}

export async function newResident(t: TestApp, territory: { id: string }, opts: { verified?: boolean } = {}) {
  const user = await newUser(t);
  await addMembership(t, user, territory, { role: 'RESIDENT', geoVerified: opts.verified });
  return user;
}

export async function newVisitor(t: TestApp, territory: { id: string }) {
  const user = await newUser(t);
  await addMembership(t, user, territory, { role: 'VISITOR' });
  return user;
}

export async function newCurator(t: TestApp, territory: { id: string }) {
  const user = await newUser(t);
  await addMembership(t, user, territory, { role: 'RESIDENT', capabilities: ['CURATOR'], geoVerified: true });
  return user;
}

export async function newModerator(t: TestApp, territory: { id: string }) {
  const user = await newUser(t);
  await addMembership(t, user, territory, { role: 'VISITOR', capabilities: ['MODERATOR'] });
  return user;
}

/** Counts rows of a table: failure paths assert that nothing was written. */
export async function countRows(t: TestApp, table: string, where = 'true', params: unknown[] = []) {
  const rows = await t.sql<{ n: string }>(`select count(*)::text as n from ${table} where ${where}`, params);
  return Number(rows[0]?.n ?? 0);
}

/**
 * The rows of every table of the application, by table, but the rate limit's counters (which count a refused request
 * too) and `except`: the generic contract tests assert that a refused request leaves them all as they were.
 */
export async function everyTableCount(t: TestApp, except: readonly string[] = []): Promise<Record<string, number>> {
  const rows = await t.sql<{ name: string; n: number }>(
    `select table_name as name,
            (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from public.%I', table_name), false, true, '')))[1]::text::int as n
       from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> all($1::text[])`,
    [['rate_limit_counter', ...except]],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

/**
 * A race forced into one interleaving, without sleeps: `rival` (the competing write, e.g. a cancel's update) runs on a
 * connection of its own and stays uncommitted while `write` is sent; it commits once the write waits for a lock (or
 * has answered already, having waited for nothing). So the rival always commits in the middle of the write.
 */
export async function commitDuring<R>(t: TestApp, rival: { sql: string; params: unknown[] }, write: () => PromiseLike<R>): Promise<R> {
  const client = new pg.Client({ connectionString: t.databaseUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(rival.sql, rival.params);
    let answered = false;
    // (An inject is sent when awaited: `Promise.resolve` sends it now.)
    const answer = Promise.resolve(write()).finally(() => {
      answered = true;
    });
    while (!answered && (await t.sql(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).length === 0) {
      await new Promise(setImmediate);
    }
    await client.query('commit');
    return await answer;
  } finally {
    await client.end();
  }
}
