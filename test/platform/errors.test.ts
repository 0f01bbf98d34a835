import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { classifyError } from '../../src/http/errors.js';
import { formatError } from '../../src/trpc/error-shape.js';
import { countRows, newAdmin, newUser, UNKNOWN_ID } from '../factories/index.js';
import type { TestApp } from '../setup/test-app.js';
import { createAppWith } from './support.js';

const SECRET = 'connection to 10.1.2.3 failed: password "hunter2" rejected';

let t: TestApp;
beforeAll(async () => {
  t = await createAppWith({}, (app) => {
    // Internal failures of every shape a handler can produce.
    app.get('/test/throws', async () => {
      throw new Error(SECRET);
    });
    app.get('/test/throws-type-error', async () => {
      const value = null as unknown as { deep: { field: string } };
      return value.deep.field;
    });
    app.get('/test/throws-500-with-status', async () => {
      throw Object.assign(new Error(SECRET), { statusCode: 500 });
    });
  });
});
afterAll(() => t.close());

const expectProblem = (body: unknown, status: number, instance: string) =>
  expect(body).toMatchObject({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String), instance, code: expect.any(String) });

describe('errors are problem details', () => {
  it('an unknown route is a 404 problem with the security headers', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/nowhere?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expectProblem(res.json(), 404, '/api/v1/nowhere');
    expect(res.json()).toMatchObject({ title: 'Not Found', code: 'NOT_FOUND' });
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('an unknown path outside the API is a problem too', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(res.statusCode).toBe(404);
    expectProblem(res.json(), 404, '/favicon.ico');
  });

  it('invalid JSON is a 400 problem and writes nothing', async () => {
    const admin = await newAdmin(t);
    const before = await countRows(t, 'territory');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/territories',
      headers: { ...admin.headers, 'content-type': 'application/json' },
      payload: '{"name": "Centro", ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expectProblem(res.json(), 400, '/api/v1/admin/territories');
    expect(await countRows(t, 'territory')).toBe(before);
  });

  it('an unsupported content type is a 415 problem and writes nothing; multipart is for the upload routes only, a form for /oauth/token only', async () => {
    const admin = await newAdmin(t);
    const before = await countRows(t, 'territory');
    const bodies = [
      { type: 'application/xml', payload: '<territory/>' },
      { type: 'application/x-www-form-urlencoded', payload: 'name=Centro&city=Recife&state=PE&latitude=-8.05&longitude=-34.9' },
      { type: 'text/plain', payload: '{"name":"Centro"}' },
      { type: 'multipart/form-data; boundary=x', payload: '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nCentro\r\n--x--\r\n' },
    ];
    for (const body of bodies) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/admin/territories',
        headers: { ...admin.headers, 'content-type': body.type },
        payload: body.payload,
      });
      expect(res.statusCode, body.type).toBe(415);
      expectProblem(res.json(), 415, '/api/v1/admin/territories');
    }
    expect(await countRows(t, 'territory')).toBe(before);
  });

  it('a validation failure names each field', async () => {
    const admin = await newAdmin(t);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/territories', headers: admin.headers, payload: { name: 42 } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.arrayContaining([expect.objectContaining({ field: 'name' })]) });
  });
});

describe('internal errors never leak', () => {
  it.each(['/test/throws', '/test/throws-type-error', '/test/throws-500-with-status'])('%s: a 500 problem that says nothing internal', async (url) => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toEqual({
      type: expect.any(String),
      title: 'Internal Server Error',
      status: 500,
      detail: 'An unexpected error occurred.',
      instance: url,
      code: 'INTERNAL_ERROR',
    });
    expect(res.body).not.toMatch(/hunter2|10\.1\.2\.3|deep|field|stack|at .*\.ts/);
  });
});

describe('a failed output validation', () => {
  it("is the server's 500 (the work before it may be committed), never the client's 400, with no issue shown", () => {
    const issues = z.object({ totalInCents: z.number().int().max(10) }).safeParse({ totalInCents: 11 }).error!;
    const output = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed', cause: issues });
    expect(classifyError(output)).toEqual({ status: 500, code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred.' });
    const shape = { code: -32603, message: 'Output validation failed', data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500, path: 'cart.get' } } as const;
    expect(formatError({ shape: shape as never, error: output })).toMatchObject({
      message: 'Internal server error',
      data: { problemCode: 'INTERNAL_SERVER_ERROR', errors: null },
    });
    // The input's, as before: the client's 400 naming the field.
    const input = new TRPCError({ code: 'BAD_REQUEST', message: 'Input validation failed', cause: issues });
    expect(classifyError(input)).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'totalInCents' }] });
  });
});

describe('tRPC errors', () => {
  it('a validation error at /trpc carries the problem code and no stack', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({
      method: 'GET',
      url: `/trpc/territories.byId?input=${encodeURIComponent(JSON.stringify({ id: 'not-a-uuid' }))}`,
      headers: user.headers,
    });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { error: { message: string; data: Record<string, unknown> } };
    expect(body.error.data).toMatchObject({ httpStatus: 400, problemCode: 'VALIDATION_FAILED' });
    expect(res.body).not.toContain('stack');
    expect(res.body).not.toMatch(/\.ts:\d+/);
  });

  it('an unauthenticated call at /trpc is 401 without a stack', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/trpc/territories.byId?input=${encodeURIComponent(JSON.stringify({ id: UNKNOWN_ID }))}`,
    });
    expect(res.statusCode).toBe(401);
    expect(res.body).not.toContain('stack');
  });
});

// Last: breaks this file's database on purpose, so a real query fails inside a procedure.
describe('a failing database query', () => {
  beforeAll(async () => {
    await t.sql('alter table territory rename to territory_gone');
  });

  it('REST: 500 problem without the driver message', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ status: 500, code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred.' });
    expect(res.body).not.toMatch(/relation|territory_gone|does not exist|select/i);
  });

  it('tRPC: "Internal server error" with no stack and no driver message', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/trpc/territories.list?input=${encodeURIComponent('{}')}` });
    expect(res.statusCode).toBe(500);
    const body = res.json() as { error: { message: string; data: Record<string, unknown> } };
    expect(body.error.message).toBe('Internal server error');
    expect(body.error.data).toMatchObject({ httpStatus: 500 });
    expect(res.body).not.toContain('stack');
    expect(res.body).not.toMatch(/relation|does not exist|select /i);
  });
});
