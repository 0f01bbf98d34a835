import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEvent } from '../factories/content.js';
import { newResident, newTerritory } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/** Requests a fuzzer sends: every answer a client can cause is problem details with the security headers. */
let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(() => t.close());

/** Sends raw bytes on a fresh connection; resolves with everything the server wrote until it closed. */
function raw(bytes: string | Buffer, opts: { keepWriting?: Buffer; writes?: number } = {}): Promise<{ text: string; reset: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let reset = false;
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => (reset = true));
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), reset }));
    socket.write(bytes);
    if (opts.keepWriting) {
      let left = opts.writes ?? 0;
      const pump = () => {
        while (left > 0 && !socket.destroyed) {
          left--;
          if (!socket.write(opts.keepWriting!)) return void socket.once('drain', pump);
        }
        if (!socket.destroyed) socket.end();
      };
      pump();
    } else {
      socket.end();
    }
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const headerOf = (text: string, name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(text)?.[1]?.trim();
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { code: string; status: number };

describe('stored coordinates cannot break reads (finding 8)', () => {
  it('a subnormal latitude is stored as 0, and a row stored before validation does not break nearby', async () => {
    const territory = await newTerritory(t, { flags: [] });
    const user = await newResident(t, territory, { verified: true });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/events',
      headers: user.headers,
      payload: { territoryId: territory.id, title: 'Tiny', startsAtUtc: new Date(Date.now() + 86_400_000).toISOString(), latitude: 5e-324, longitude: -40 },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().latitude).toBe(0);
    // As if stored before coordinates were rounded at validation.
    await newEvent(t, { territoryId: territory.id, createdByUserId: user.id, latitude: 5e-324, longitude: -40 });
    const nearby = await t.app.inject({ method: 'GET', url: '/api/v1/events/nearby?lat=0&lng=-40&radiusKm=50', headers: user.headers });
    expect(nearby.statusCode).toBe(200);
  });
});

describe('errors before routing are problem details with security headers (finding 9)', () => {
  it.each(['/api/v1/territories/%zz', '/api/v1/territories/%ED%A0%80', '/api/v1/territories/%FF%FE'])('%s is a 400 problem', async (url) => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.json().code).toBe('BAD_REQUEST');
  });

  it('a path parameter over 200 characters is a 414 problem', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${'a'.repeat(300)}` });
    expect(res.statusCode).toBe(414);
    expect(res.json().code).toBe('URI_TOO_LONG');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('a request line with backslashes or raw non-ASCII is answered with a problem and the headers', async () => {
    for (const line of ['GET /api\\v1 HTTP/1.1', 'GET /api/v1/é HTTP/1.1', 'GET /a b c HTTP/1.1']) {
      const { text } = await raw(Buffer.from(`${line}\r\nHost: x\r\n\r\n`, 'latin1'));
      // Node's parser refuses some (400 here), the router finds nothing for others (404): a problem either way.
      expect([400, 404]).toContain(statusOf(text));
      expect(headerOf(text, 'Content-Type')).toMatch(/^application\/problem\+json/);
      expect(headerOf(text, 'X-Content-Type-Options')).toBe('nosniff');
    }
  });

  it('a request head over 16 KiB is a 431 problem', async () => {
    const { text } = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(statusOf(text)).toBe(431);
    expect(bodyOf(text).code).toBe('HEADERS_TOO_LARGE');
    expect(headerOf(text, 'X-Frame-Options')).toBe('DENY');
  });

  it('bytes after a body shorter than its Content-Length are never served as a second request', async () => {
    const smuggled = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
    const { text } = await raw(
      `POST /api/v1/auth/logout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}garbage ${smuggled}`,
    );
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    // The body's answer (400: no refresh token), then at most a 400 for the surplus; the connection is closed on it,
    // so the request behind it is never served.
    expect(statuses[0]).toBe(400);
    expect(statuses.slice(1).every((status) => status === 400)).toBe(true);
    expect(statuses).not.toContain(200);
  });

  it('OPTIONS without preflight headers is 204 with the security headers, not a plain-text 400', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/territories' });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('an oversized body is answered, not reset (finding 10)', () => {
  it('a client that sends 50 MB without Expect: 100-continue reads the 413', async () => {
    const head = `POST /api/v1/auth/logout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`;
    const { text, reset } = await raw(head, { keepWriting: Buffer.alloc(64 * 1024, 32), writes: 800 });
    expect(reset).toBe(false);
    expect(statusOf(text)).toBe(413);
    expect(bodyOf(text).code).toBe('PAYLOAD_TOO_LARGE');
  });
});
