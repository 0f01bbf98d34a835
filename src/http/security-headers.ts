import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
// The docs page loads its scripts and styles from this origin only; Swagger UI needs inline styles.
const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The specification's headers on every response, errors and 404s included. HSTS only over HTTPS
 * (behind a proxy, `X-Forwarded-Proto` decides: the app trusts the proxy in production).
 */
/**
 * The headers every API response carries (the docs page has its own CSP; HSTS depends on the protocol). Names in
 * lower case, as Fastify stores and sends them: a name given so is stored as it is, where any other is lowered into a
 * new string on every answer.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'x-xss-protection': '1; mode=block',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'permissions-policy': 'geolocation=(), microphone=(), camera=()',
  'content-security-policy': API_CSP,
};

export const securityHeadersPlugin = fp(
  async (app: FastifyInstance) => {
    // Callback hooks, not async ones, on every request: no promise and no extra tick each.
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.headers(SECURITY_HEADERS);
      if (request.url.startsWith('/docs')) reply.header('content-security-policy', DOCS_CSP);
      if (request.protocol === 'https') reply.header('Strict-Transport-Security', 'max-age=31536000; includeSubDomains; preload');
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);

/** Production: plain HTTP is redirected to HTTPS (health probes excepted, so a load balancer can check). */
export const httpsRedirectPlugin = fp(
  async (app: FastifyInstance, opts: { publicBaseUrl: string }) => {
    app.addHook('onRequest', async (request, reply) => {
      // The route, not the URL: a probe may add a query string (a cache-buster) or a trailing slash.
      const route = request.routeOptions.url;
      if (request.protocol === 'https' || route === '/health' || route === '/ready') return;
      // The configured origin, not the Host header: a forged Host must not turn the redirect into an open one.
      return reply.redirect(`${opts.publicBaseUrl}${request.url}`, 308);
    });
  },
  { name: 'https-redirect' },
);
