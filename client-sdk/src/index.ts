import { createTRPCClient, createWSClient, httpBatchLink, type OperationLink, splitLink, type TRPCClient, type TRPCLink, wsLink } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../src/routers/index.js';

export type { AppRouter };
/** Input of every procedure, e.g. `RouterInputs['territories']['list']`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Output of every procedure, e.g. `RouterOutputs['territories']['byId']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type TerritoryClient = TRPCClient<AppRouter>;

/** A user access token, or nothing for public calls. May be async (refresh before it expires). */
export type TokenSource = () => string | null | undefined | Promise<string | null | undefined>;

export interface TerritoryClientOptions {
  /** Server origin, e.g. `http://localhost:3000` (tRPC is served under `/trpc`). */
  url: string;
  /** A fixed user token (from `POST /api/v1/auth/social`). */
  token?: string;
  /** Asked before every HTTP batch and every WebSocket connection; wins over `token`. */
  getToken?: TokenSource;
  /** Custom fetch (tests, proxies); defaults to the global one. */
  fetch?: typeof globalThis.fetch;
  /** WebSocket class for runtimes without a global one (e.g. `ws` on Node < 22). */
  WebSocket?: typeof globalThis.WebSocket;
  /** How long an idle subscription socket stays open before it is closed (default 10 s). */
  wsIdleCloseMs?: number;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** `http(s)://host/base` -> `ws(s)://host/base/trpc`. */
export function trpcWebSocketUrl(url: string): string {
  const parsed = new URL(`${trimSlash(url)}/trpc`);
  parsed.protocol = parsed.protocol === 'https:' ? 'wss:' : 'ws:';
  return parsed.toString();
}

/**
 * The typed tRPC client of the whole API. Queries and mutations go over HTTP batching (several calls made in the
 * same tick share one request); subscriptions over one WebSocket that is opened on first use and closed when idle,
 * so a script that never subscribes holds no socket open.
 */
export function createTerritoryClient(options: TerritoryClientOptions): TerritoryClient {
  const base = trimSlash(options.url);
  const resolveToken = async () => (options.getToken ? await options.getToken() : options.token) ?? null;

  // Made on the first subscription: a runtime without WebSocket (Node 20) can still make every other call.
  const subscriptions: TRPCLink<AppRouter> = (runtime) => {
    let link: OperationLink<AppRouter> | undefined;
    return (op) => {
      link ??= wsLink<AppRouter>({
        client: createWSClient({
          url: trpcWebSocketUrl(base),
          WebSocket: options.WebSocket,
          // The server reads `token` from the connection params (browsers cannot set headers on a WebSocket).
          connectionParams: async () => {
            const token = await resolveToken();
            return token ? { token } : null;
          },
          lazy: { enabled: true, closeMs: options.wsIdleCloseMs ?? 10_000 },
        }),
      })(runtime);
      return link(op);
    };
  };

  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: subscriptions,
        false: httpBatchLink<AppRouter>({
          url: `${base}/trpc`,
          fetch: options.fetch,
          // Batched GETs carry their inputs in the URL; past this length the batch is split.
          maxURLLength: 8000,
          headers: async () => {
            const token = await resolveToken();
            return token ? { authorization: `Bearer ${token}` } : {};
          },
        }),
      }),
    ],
  });
}

export { TRPCClientError } from '@trpc/client';
