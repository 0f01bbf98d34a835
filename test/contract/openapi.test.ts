import SwaggerParser from '@apidevtools/swagger-parser';
import type { LightMyRequestResponse } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CART_NOTES_MAX } from '../../src/routers/cart/cart.schemas.js';
import { SYSTEM_PERMISSIONS } from '../../src/entities/user.entity.js';
import { restOperations } from '../../src/openapi/plugin.js';
import { appRouter } from '../../src/routers/index.js';
import { everyTableCount, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { doc, type JsonSchema, jsonBody, type Op, ops, resolveRef, UNKNOWN_ID } from './document.js';

/**
 * Generic tests driven by the generated OpenAPI document: every operation added later is covered without
 * writing anything here.
 */

const isJourney = (op: Op) => op.path.startsWith('/api/v2/');
/** v2 operations need a client token, which needs the client-credentials operations. */
const CLIENTS_DOCUMENTED = !!(doc.paths['/api/v1/admin/clients']?.post && doc.paths['/oauth/token']?.post);
const callable = (op: Op) => !isJourney(op) || CLIENTS_DOCUMENTED;
const uncallable = ops.filter((op) => !callable(op));
const secured = (op: Op) => (op.operation.security ?? []).length > 0;
const pathParams = (op: Op) => [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
/** Path parameters that hold ids (UUIDs): the ones a malformed id is sent in. */
const idParams = (op: Op) =>
  pathParams(op).filter((name) => {
    const schema = op.operation.parameters?.find((p) => p.in === 'path' && p.name === name)?.schema;
    return schema?.format === 'uuid' || /(^id|Id)$/.test(name);
  });
/** Ids of rows that exist, by parameter name: a territory check must not answer 404 before the body is validated. */
const known: Record<string, string> = {};
const fill = (path: string, values: Record<string, string>, fallback: string) =>
  path.replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(values[name] ?? known[name] ?? fallback));
const multipartBody = (op: Op) => op.operation.requestBody?.content?.['multipart/form-data'];

/** The JSON types a schema admits; null when it admits anything (no type information). */
function allowedTypes(schema: JsonSchema | undefined): Set<string> | null {
  const s = resolveRef(schema);
  if (!s) return null;
  const union = s.anyOf ?? s.oneOf;
  if (union) {
    const all = new Set<string>();
    for (const member of union) {
      const types = allowedTypes(member);
      if (!types) return null;
      for (const type of types) all.add(type);
    }
    return all;
  }
  if (s.allOf?.length) return allowedTypes(s.allOf[0]);
  const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (s.enum) return new Set(s.enum.map(typeOf));
  if (s.const !== undefined) return new Set([typeOf(s.const)]);
  if (!s.type) return null;
  const types = new Set(Array.isArray(s.type) ? s.type : [s.type]);
  if (types.has('integer')) types.add('number');
  return types;
}

const CANDIDATES: [string, unknown][] = [
  ['number', 12345],
  ['string', 'wrong-type'],
  ['boolean', true],
  ['array', ['wrong']],
  ['object', { wrong: true }],
];

/** An object whose every typed field holds a value of a type the field does not admit. */
function wrongTypedObject(schema: JsonSchema): Record<string, unknown> | null {
  const s = resolveRef(schema);
  const out: Record<string, unknown> = {};
  for (const [field, fieldSchema] of Object.entries(s?.properties ?? {})) {
    const types = allowedTypes(fieldSchema);
    if (!types) continue;
    const wrong = CANDIDATES.find(([type]) => !types.has(type));
    if (wrong) out[field] = wrong[1];
  }
  return Object.keys(out).length ? out : null;
}

function expectErrorBody(res: LightMyRequestResponse, op: Op) {
  if (isJourney(op)) {
    expect(res.json()).toMatchObject({ error: expect.any(String), code: expect.any(String), timestamp: expect.any(String) });
  } else {
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({
      type: expect.any(String),
      title: expect.any(String),
      status: res.statusCode,
      detail: expect.any(String),
      code: expect.any(String),
    });
  }
}

let t: TestApp;
let admin: TestUser;
/** Headers of a SYSTEM_ADMIN (all system permissions, verified identity), per API version. */
const callerHeaders: { v1: Record<string, string>; v2: Record<string, string> | null } = { v1: {}, v2: null };

/** A journeys client token from the documented API itself, when the client-credentials operations exist. */
async function journeyHeaders(user: TestUser): Promise<Record<string, string> | null> {
  if (!CLIENTS_DOCUMENTED) return null;
  const registered = await t.app.inject({
    method: 'POST',
    url: '/api/v1/admin/clients',
    headers: user.headers,
    payload: { name: 'Contract tests', description: 'contract', scopes: ['journeys:read', 'journeys:write'], redirectUris: [] },
  });
  expect(registered.statusCode, registered.body).toBeLessThan(300);
  const { clientId, clientSecret } = registered.json() as { clientId: string; clientSecret: string };
  const token = await t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope: 'journeys:read journeys:write',
    }).toString(),
  });
  expect(token.statusCode, token.body).toBe(200);
  return { authorization: `Bearer ${(token.json() as { access_token: string }).access_token}`, 'x-user-token': user.token };
}

beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  admin = await newUser(t, { permissions: [...SYSTEM_PERMISSIONS], identity: 'Verified', displayName: 'Contract Admin' });
  callerHeaders.v1 = admin.headers;
  known.territoryId = (await newTerritory(t, { name: 'Contract territory' })).id;
  callerHeaders.v2 = await journeyHeaders(admin);
});
afterAll(() => t.close());

const headersFor = (op: Op) => (isJourney(op) ? callerHeaders.v2 : callerHeaders.v1)!;

if (uncallable.length > 0) {
  it.skip(`${uncallable.length} v2 journeys operations with a client token: skipped until POST /api/v1/admin/clients and POST /oauth/token exist`, () => {});
}

describe('(a) every protected operation answers 401 without a token', () => {
  const protectedOps = ops.filter(secured);
  it('the document has protected operations', () => expect(protectedOps.length).toBeGreaterThan(0));
  it.each(protectedOps.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
    const res = await t.app.inject({ method: op.method as 'GET', url: fill(op.path, {}, UNKNOWN_ID) });
    expect(res.statusCode, res.body).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expectErrorBody(res, op);
  });
});

describe('(b) a malformed path id answers 400 or 404 and writes nothing, never 500', () => {
  // Every path parameter malformed at once, then each id alone (the others well-formed), so each one is checked.
  const cases = ops
    .filter((op) => callable(op) && idParams(op).length > 0)
    .flatMap((op) => {
      const names = idParams(op);
      const everything = Object.fromEntries(pathParams(op).map((name) => [name, 'not-a-uuid']));
      const all = { label: `${op.name} (all path parameters malformed)`, op, values: everything };
      if (pathParams(op).length === 1) return [all];
      return [all, ...names.map((name) => ({ label: `${op.name} ({${name}} malformed)`, op, values: { [name]: 'not-a-uuid' } }))];
    });
  it.each(cases.map((c) => [c.label, c] as const))('%s', async (_label, { op, values }) => {
    const before = await everyTableCount(t);
    const res = await t.app.inject({ method: op.method as 'GET', url: fill(op.path, values, UNKNOWN_ID), headers: headersFor(op) });
    expect([400, 404], `${res.statusCode} ${res.body}`).toContain(res.statusCode);
    expectErrorBody(res, op);
    expect(await everyTableCount(t)).toEqual(before);
  });
});

describe('(c) a JSON body of the wrong type answers 400 and writes nothing, never 500 or 2xx', () => {
  const bodyOps = ops.filter((op) => callable(op) && jsonBody(op));
  const cases = bodyOps.flatMap((op) => {
    const wrongObject = wrongTypedObject(jsonBody(op)!);
    return [
      { label: `${op.name} (JSON array)`, op, payload: [{ wrong: true }] as unknown },
      ...(wrongObject ? [{ label: `${op.name} (every field of the wrong type)`, op, payload: wrongObject as unknown }] : []),
    ];
  });
  it.each(cases.map((c) => [c.label, c] as const))('%s', async (_label, { op, payload }) => {
    const before = await everyTableCount(t);
    const res = await t.app.inject({
      method: op.method as 'POST',
      url: fill(op.path, {}, UNKNOWN_ID),
      headers: { ...headersFor(op), 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
    expect(res.statusCode, res.body).toBe(400);
    expectErrorBody(res, op);
    expect(await everyTableCount(t)).toEqual(before);
  });
});

describe('multipart operations refuse a body that is not multipart and write nothing', () => {
  const multipartOps = ops.filter((op) => callable(op) && multipartBody(op));
  // With a resource in the path, access to it (403, or 404 for an unknown id) may be checked before the body is read.
  const allowed = (op: Op) => (pathParams(op).length ? [400, 403, 404, 415] : [400, 415]);
  it.each(multipartOps.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
    const before = await everyTableCount(t);
    const url = fill(op.path, {}, UNKNOWN_ID);
    const asJson = await t.app.inject({ method: op.method as 'POST', url, headers: headersFor(op), payload: { file: 'not a file' } });
    expect(allowed(op), `${asJson.statusCode} ${asJson.body}`).toContain(asJson.statusCode);
    expectErrorBody(asJson, op);
    const asText = await t.app.inject({ method: op.method as 'POST', url, headers: { ...headersFor(op), 'content-type': 'text/plain' }, payload: 'hello' });
    expect(allowed(op), `${asText.statusCode} ${asText.body}`).toContain(asText.statusCode);
    expectErrorBody(asText, op);
    expect(await everyTableCount(t)).toEqual(before);
  });
});

describe('(d) the document', () => {
  it('states the length limits of sanitized free text (a pipe is documented by its input)', () => {
    const fieldsOf = (path: string, method: string) => resolveRef(doc.paths[path]![method]!.requestBody!.content!['application/json']!.schema)!.properties!;
    const post = fieldsOf('/api/v1/feed', 'post') as Record<string, { minLength?: number; maxLength?: number }>;
    expect(post.title).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(post.content).toMatchObject({ type: 'string', minLength: 1, maxLength: 5000 });
    const cartLine = fieldsOf('/api/v1/cart', 'post') as Record<string, { anyOf?: { maxLength?: number }[] }>;
    expect(cartLine.notes?.anyOf?.[0]?.maxLength).toBe(CART_NOTES_MAX);
  });

  it('is valid OpenAPI 3.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    // The validator dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('documents 201/204 where an operation declares successStatus, and a 200 only for idempotent repeats', () => {
    const declared = restOperations(appRouter).filter((op) => op.meta.successStatus);
    expect(declared.length).toBeGreaterThan(0);
    for (const op of declared) {
      const responses = doc.paths[op.path]?.[op.method.toLowerCase()]?.responses ?? {};
      const name = `${op.method} ${op.path}`;
      expect(Object.keys(responses), name).toContain(String(op.meta.successStatus));
      if (op.meta.idempotentRepeat) expect(Object.keys(responses), name).toContain('200');
      else expect(Object.keys(responses), name).not.toContain('200');
      const created = (responses as Record<string, { headers?: Record<string, unknown> }>)['201'];
      if (op.meta.successStatus === 201) expect(created?.headers, name).toHaveProperty('Location');
    }
  });

  it('documents the problem body for 4xx responses of v1 operations; the token endpoint keeps RFC 6749 errors', () => {
    for (const op of ops.filter((o) => !isJourney(o))) {
      for (const [status, response] of Object.entries(op.operation.responses)) {
        if (Number(status) < 400 || Number(status) >= 500) continue;
        const content = (response as { content?: Record<string, unknown> }).content;
        const rfc6749 = op.name === 'POST /oauth/token' && status !== '429';
        expect(content, `${op.name} ${status}`).toHaveProperty([rfc6749 ? 'application/json' : 'application/problem+json']);
      }
    }
  });

  it('declares a 429 with its Retry-After header on every operation (v1 and v2) but the payment webhook, which is not rate limited', () => {
    for (const op of ops) {
      const tooMany = (op.operation.responses as Record<string, { headers?: Record<string, unknown> }>)['429'];
      if (op.name === 'POST /api/v1/payments/webhooks/{provider}') {
        expect(tooMany, op.name).toBeUndefined();
        expect(op.operation).toHaveProperty('x-rate-limit', false);
      } else {
        expect(tooMany?.headers, op.name).toHaveProperty('Retry-After');
      }
    }
  });
});

describe('(e) coverage of the specification', () => {
  // Same comparison as shared/tools/coverage.mjs: informative only, it never fails the run.
  const root = resolve(import.meta.dirname, '../..');
  const tsv = [process.env.SPEC_OPERATIONS_TSV, join(root, '..', 'shared', 'spec', 'operations.tsv'), '/work/shared/spec/operations.tsv'].find(
    (p): p is string => !!p && existsSync(p),
  );
  it('prints how many documented operations are in the document', () => {
    if (!tsv) {
      console.log('coverage: shared/spec/operations.tsv not found next to the repository; set SPEC_OPERATIONS_TSV to compare');
      return;
    }
    const wanted = readFileSync(tsv, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t') as [string, string]);
    const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}').replace(/\/+$/, '');
    const have = new Set(ops.map((op) => `${op.method} ${shape(op.path)}`));
    const missing = wanted.filter(([method, path]) => !have.has(`${method} ${shape(path)}`));
    const lines = [
      ...missing.map(([method, path]) => `missing: ${method} ${path}`),
      `${wanted.length - missing.length} of ${wanted.length} documented operations are in the document`,
    ];
    console.log(lines.join('\n'));
    expect(wanted.length).toBeGreaterThan(0);
  });
});
