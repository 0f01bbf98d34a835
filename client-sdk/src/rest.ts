import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './rest-types.js';

export type { components, operations, paths };
export type RestClient = Client<paths>;
/** RFC 9457 problem details: the body of every v1 error. */
export type Problem = components['schemas']['Problem'];

export interface RestClientOptions {
  /** Server origin, e.g. `http://localhost:3000` (the document's paths start with `/api/v1`). */
  baseUrl: string;
  /** A fixed user token (from `POST /api/v1/auth/social`). */
  token?: string;
  /** Asked before every request; wins over `token`. */
  getToken?: () => string | null | undefined | Promise<string | null | undefined>;
  /** Custom fetch (tests, proxies); defaults to the global one. */
  fetch?: typeof globalThis.fetch;
}

/** Adds `Authorization: Bearer <token>` unless the call set its own header. */
function bearerAuth(options: RestClientOptions): Middleware {
  return {
    async onRequest({ request }) {
      if (request.headers.has('authorization')) return request;
      const token = options.getToken ? await options.getToken() : options.token;
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
}

/**
 * The REST client (`/api/v1`, `/api/v2/journeys`), typed by the types generated from openapi.json:
 * `await client.GET('/api/v1/territories/{id}', { params: { path: { id } } })` answers `{ data, error, response }`.
 */
export function createRestClient(options: RestClientOptions): RestClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: options.fetch });
  client.use(bearerAuth(options));
  return client;
}
