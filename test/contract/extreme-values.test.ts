import { afterAll, beforeAll, expect, it } from 'vitest';
import { SYSTEM_PERMISSIONS } from '../../src/entities/user.entity.js';
import { everyTableCount, newAdmin, newResident, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { clientToken } from '../journeys/helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { type JsonSchema, jsonBody, ops, resolveRef, UNKNOWN_ID } from './document.js';

/**
 * "Never a 500 for anything a client can send", for values of the right type: test/contract/openapi.test.ts sends
 * values of the wrong type to every operation; this one sends, to every operation of the OpenAPI document, a body and
 * a query built from its schemas with each kind of extreme value in every field at once (the longest strings allowed,
 * NUL and lone surrogates, integers past PostgreSQL's int4 and JavaScript's safe range, the largest doubles, dates in
 * year 275760 or year 1, empty strings and lists, lists of 5,000). Values the schemas admit reach the services and the
 * database, where a 500 would come from. Callers: a system admin and a verified resident of the territory in the path,
 * fresh for each operation (an operation may sign its caller out); journeys with a client token.
 */
const KINDS = ['longest', 'control characters', 'largest', 'negative', 'empty', 'far dates', 'many items'] as const;
type Kind = (typeof KINDS)[number];

/**
 * A value of the schema's type holding the kind's extreme (ids: the territory's, so access checks pass); objects with
 * every field, or (`requiredOnly`) their required ones alone (and the territory), so that optional references do not
 * stop the call early.
 */
function extreme(schema: JsonSchema | undefined, kind: Kind, territoryId: string, requiredOnly: boolean, depth = 0): unknown {
  const s = resolveRef(schema);
  if (!s || depth > 6) return 'x';
  const inner = (member: JsonSchema | undefined) => extreme(member, kind, territoryId, requiredOnly, depth + 1);
  const union = s.anyOf ?? s.oneOf;
  if (union) return inner(union.find((member) => resolveRef(member)?.type !== 'null') ?? union[0]);
  if (s.allOf?.length) return inner(s.allOf[0]);
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const type = Array.isArray(s.type) ? s.type.find((name) => name !== 'null') : s.type;
  switch (type) {
    case 'string':
      if (s.format === 'uuid') return territoryId;
      if (s.format === 'date-time')
        return kind === 'far dates' ? '275760-09-13T00:00:00.000Z' : kind === 'largest' ? '0001-01-01T00:00:00.000Z' : '2026-12-01T10:00:00.000Z';
      if (s.format === 'date') return kind === 'far dates' ? '9999-12-31' : '2026-12-01';
      if (s.format === 'email') return 'someone@example.com';
      if (s.format === 'uri') return 'https://example.com/x';
      if (kind === 'longest') return 'x'.repeat(Math.min(s.maxLength ?? 100_000, 100_000));
      if (kind === 'control characters') return 'a\u0000b\ud800c\u202e';
      if (kind === 'empty') return '';
      if (kind === 'far dates') return '99999-01-01';
      return 'Text value';
    case 'integer':
      if (kind === 'longest') return s.maximum ?? 2_147_483_648;
      if (kind === 'largest') return s.maximum ?? Number.MAX_SAFE_INTEGER;
      if (kind === 'negative') return s.minimum ?? -2_147_483_649;
      return 1;
    case 'number':
      if (kind === 'longest' || kind === 'largest') return s.maximum ?? Number.MAX_VALUE;
      if (kind === 'negative') return s.minimum ?? -Number.MAX_VALUE;
      return 1.5;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: kind === 'many items' ? 5000 : kind === 'empty' ? 0 : 1 }, () => inner(s.items));
    case 'object':
      return Object.fromEntries(
        Object.entries(s.properties ?? {})
          .filter(([name]) => !requiredOnly || s.required?.includes(name) || name === 'territoryId')
          .map(([name, field]) => [name, inner(field)]),
      );
    default:
      return 'x';
  }
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
});
afterAll(() => t.close());

/**
 * One past the newest transaction that ended, as a snapshot sees it: a request that wrote anything (or tried: the
 * rolled-back writes of a refusal) had a transaction id, so while it stays the same the rows of every table are those
 * counted last; they are counted again only when it moved.
 */
const completedXid = async () => (await t.sql<{ xid: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as xid'))[0]!.xid;
let counted: { xid: string; rows: Record<string, number> } | null = null;
async function rowsNow() {
  const xid = await completedXid();
  if (counted?.xid !== xid) counted = { xid, rows: await everyTableCount(t) };
  return counted;
}

it('no operation answers 500 to extreme values of the right type, and none that refuses them writes anything', async () => {
  const failures: string[] = [];
  let reachedSuccess = 0;
  const client = await clientToken(t, await newAdmin(t));
  for (const op of ops) {
    const territory = await newTerritory(t);
    const admin: TestUser = await newUser(t, { permissions: [...SYSTEM_PERMISSIONS], identity: 'Verified' });
    const resident = await newResident(t, territory, { verified: true });
    const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => (name === 'territoryId' ? territory.id : name === 'userId' ? resident.id : UNKNOWN_ID));
    const body = jsonBody(op);
    const query = (op.operation.parameters ?? []).filter((p) => p.in === 'query');
    for (const [kind, requiredOnly] of KINDS.flatMap((k) => [[k, false] as const, [k, true] as const])) {
      const params = new URLSearchParams();
      for (const p of query.filter((q) => !requiredOnly || q.required)) {
        const value = extreme(p.schema, kind, territory.id, requiredOnly);
        params.set(p.name, typeof value === 'object' ? JSON.stringify(value) : String(value));
      }
      const url = params.size > 0 ? `${path}?${params}` : path;
      const payload = body ? JSON.stringify(extreme(body, kind, territory.id, requiredOnly)) : undefined;
      for (const caller of [admin, resident]) {
        const auth = op.path.startsWith('/api/v2/') ? { authorization: `Bearer ${client}`, 'x-user-token': caller.token } : caller.headers;
        const before = await rowsNow();
        const res = await t.app.inject({ method: op.method, url, headers: { ...auth, ...(payload ? { 'content-type': 'application/json' } : {}) }, payload });
        const label = `${op.method} ${op.path} (${kind}${requiredOnly ? ', required fields only' : ''})`;
        if (res.statusCode >= 500) failures.push(`${label}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        // A refusal writes nothing.
        if (res.statusCode >= 400 && JSON.stringify((await rowsNow()).rows) !== JSON.stringify(before.rows))
          failures.push(`${label}: ${res.statusCode} but wrote rows`);
        if (res.statusCode < 300) reachedSuccess += 1;
      }
    }
  }
  expect(failures).toEqual([]);
  // The values are not all refused at the door: many calls reach the services and succeed.
  expect(reachedSuccess).toBeGreaterThan(1000);
}, 120_000);
