import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Every method an operation is served with (a preflight for PATCH or DELETE must be answered yes too). */
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** What a browser script may read: where a created thing is, when to retry, the rate limits. */
const EXPOSED_HEADERS = 'Location, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
/**
 * The `Vary` of every answer (any may echo an origin). A list for tRPC's `responseMeta` (app.ts), which appends it to
 * the `Vary` tRPC sends, as that header replaces the one set here.
 */
export const VARY_ORIGIN = ['Origin'];
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * CORS (specification, Authentication 8): an allowed `Origin` is echoed (any origin in development, `*` configured;
 * the configured list in production, with credentials), with the headers a script may read. Every response varies
 * with the origin, so a cache never hands one origin's answer to another. An OPTIONS request is answered here, before
 * authentication and rate limiting, as a browser sends its preflight without credentials: 204 with what is allowed
 * (a disallowed origin gets no `Access-Control-Allow-Origin`, which is the browser's refusal).
 *
 * One callback hook with its answers decided at startup: a request without `Origin` (every non-browser client)
 * costs a lookup and one header.
 */
export const corsPlugin = fp(
  async (app: FastifyInstance, opts: { allowedOrigins: readonly string[] }) => {
    const anyOrigin = opts.allowedOrigins.includes('*');
    const allowed = new Set(opts.allowedOrigins);
    app.addHook('onRequest', (request, reply, done) => {
      const origin = request.headers.origin;
      const allowedOrigin = origin !== undefined && (anyOrigin || allowed.has(origin));
      if (allowedOrigin) {
        reply.header('Access-Control-Allow-Origin', origin);
        if (!anyOrigin) reply.header('Access-Control-Allow-Credentials', 'true');
        reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      }
      if (request.method !== 'OPTIONS') {
        // Every answer: the name in lower case is stored as it is (security-headers.ts).
        reply.header('vary', 'Origin');
        return done();
      }
      reply.header('Vary', 'Origin, Access-Control-Request-Headers');
      reply.header('Access-Control-Allow-Methods', ALLOWED_METHODS);
      const requested = request.headers['access-control-request-headers'];
      if (requested !== undefined) reply.header('Access-Control-Allow-Headers', requested);
      reply.header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
      // Some browsers wait for a body on a 204 without a length.
      void reply.code(204).header('Content-Length', '0').send();
    });
  },
  { name: 'cors' },
);
