import { expect } from 'vitest';
import type { TestUser } from '../factories/index.js';
import type { TestApp } from '../setup/test-app.js';

/** A client application registered by `admin`, and a client token holding `scopes`. */
export async function clientToken(t: TestApp, admin: TestUser, scopes: string[] = ['journeys:read', 'journeys:write']): Promise<string> {
  const registered = await t.app.inject({
    method: 'POST',
    url: '/api/v1/admin/clients',
    headers: admin.headers,
    payload: { name: 'Journeys test app', scopes },
  });
  expect(registered.statusCode, registered.body).toBe(201);
  const { clientId, clientSecret } = registered.json() as { clientId: string; clientSecret: string };
  const token = await t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  });
  expect(token.statusCode, token.body).toBe(200);
  return (token.json() as { access_token: string }).access_token;
}

export interface V2Call {
  client?: string | null;
  user?: TestUser | null;
  payload?: unknown;
  headers?: Record<string, string>;
}

/** A v2 call: `client` in Authorization, the user's token in X-User-Token. */
export function v2(t: TestApp, method: 'GET' | 'POST', url: string, call: V2Call = {}) {
  const headers: Record<string, string> = { ...(call.headers ?? {}) };
  if (call.client) headers.authorization = `Bearer ${call.client}`;
  if (call.user) headers['x-user-token'] = call.user.token;
  return t.app.inject({ method, url: `/api/v2/journeys${url}`, headers, ...(call.payload === undefined ? {} : { payload: call.payload as object }) });
}

/** The v2 error body: `{error, code, details, timestamp}`. */
export function expectV2Error(res: { statusCode: number; json: () => unknown; body: string }, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'details', 'error', 'timestamp']);
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe('string');
  expect(new Date(body.timestamp as string).toISOString()).toBe(body.timestamp);
  return body;
}
