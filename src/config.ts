import { z } from 'zod';

/** The key used outside production when none is configured. Production refuses to start with it. */
export const DEVELOPMENT_SIGNING_KEY = 'territory-platform-development-signing-key-change-me';

const bool = z.stringbool();
const int = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

const environmentSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: int(3000),
  HOST: z.string().default('0.0.0.0'),
  ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  DATABASE_URL: z.string().optional(),
  MIGRATION_DATABASE_URL: z.string().optional(),
  DATABASE_ALLOW_SUPERUSER: bool.default(false),
  DATA_DIR: z.string().default('.data'),
  EMBEDDED_PG_PORT: int(54329),
  PUBLIC_BASE_URL: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SEED_DEMO_DATA: bool.default(true),
  JWT__SIGNINGKEY: z.string().default(''),
  JWT__ISSUER: z.string().default('territory-platform'),
  JWT__AUDIENCE: z.string().default('territory-platform'),
  JWT__EXPIRESINSECONDS: int(3600),
  AUTH__TRUSTPROVIDERCLAIMS: bool.optional(),
  AUTH__PROVIDERS: z.string().default(''),
  BOOTSTRAP_ADMINS: z.string().default(''),
  Cors__AllowedOrigins: z.string().default(''),
  RateLimiting__PermitLimit: int(60),
  RateLimiting__WindowSeconds: int(60),
  RateLimiting__QueueLimit: int(0),
  RateLimiting__Auth__PermitLimit: int(5),
  RateLimiting__FeedRead__PermitLimit: int(100),
  RateLimiting__Write__PermitLimit: int(30),
  /** Where counters live: `postgres` (shared by every API process) or `memory` (this process only). */
  RateLimiting__Store: z.enum(['postgres', 'memory']).default('postgres'),
  JOBS__ENABLED: bool.default(true),
  METRICS__TOKEN: z.string().default(''),
  TRUST_PROXY: z.string().default('loopback'),
  /**
   * The payment gateway: `none` (payments off: cart lines become inquiries), `fake` (local, no money moves; the default
   * outside production) or `stripe` (Stripe PaymentIntents; needs PAYMENTS__STRIPESECRETKEY and PAYMENTS__WEBHOOKSECRET).
   */
  PAYMENTS__PROVIDER: z.enum(['none', 'fake', 'stripe']).optional(),
  /**
   * The key webhooks are verified with: `fake`, the HMAC-SHA256 key of `X-Signature: sha256=<hex>`; `stripe`, the
   * endpoint's signing secret (`whsec_...`) checked against `Stripe-Signature`.
   */
  PAYMENTS__WEBHOOKSECRET: z.string().optional(),
  /** Stripe's secret (or restricted) API key, `sk_...`/`rk_...`. */
  PAYMENTS__STRIPESECRETKEY: z.string().optional(),
  /** Where the Stripe API is (default https://api.stripe.com): a stripe-mock or a local stub in tests. */
  PAYMENTS__STRIPEAPIURL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * The payout gateway (src/routers/payouts/payout-gateway.ts): `none` (payouts off: ready money stays ready; the
   * production default) or `fake` (local, no money moves; the default outside production, refused in production).
   */
  PAYOUTS__PROVIDER: z.enum(['none', 'fake']).optional(),
});

/** The webhook key used outside production when none is configured. */
export const DEVELOPMENT_WEBHOOK_SECRET = 'territory-platform-development-webhook-secret';

/** `TRUST_PROXY`: a hop count (`1`: the nearest proxy), or a comma list of addresses, CIDRs and `loopback`. */
function trustProxyOf(value: string): string[] | ((address: string, hop: number) => boolean) {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    return (_address, hop) => hop < hops;
  }
  return trimmed
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** One social-login provider verified in production: `name|issuer|audience|jwksUrl;...` in AUTH__PROVIDERS. */
export interface AuthProviderConfig {
  name: string;
  issuer: string;
  audience: string;
  jwksUrl: string;
}

function parseProviders(raw: string): AuthProviderConfig[] {
  return raw
    .split(';')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [name, issuer, audience, jwksUrl] = entry.split('|').map((part) => part.trim());
      if (!name || !issuer || !audience || !jwksUrl) {
        throw new ConfigError(`AUTH__PROVIDERS entry "${entry}" must be name|issuer|audience|jwksUrl`);
      }
      return { name: name.toLowerCase(), issuer, audience, jwksUrl };
    });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  // An empty variable counts as unset (`PORT=` in an env file or `${X:-}` in compose must not mean port 0).
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(given);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ConfigError(`Invalid configuration ${first?.path.join('.')}: ${first?.message}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const publicBaseUrl = e.PUBLIC_BASE_URL ? e.PUBLIC_BASE_URL.replace(/\/+$/, '') : undefined;
  const corsOrigins = e.Cors__AllowedOrigins.split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  const trustProviderClaims = e.AUTH__TRUSTPROVIDERCLAIMS ?? !production;
  // Payments are off in production unless a real provider is chosen; the fake one is the local default.
  const paymentsProvider = e.PAYMENTS__PROVIDER ?? (production ? 'none' : 'fake');
  const payoutsProvider = e.PAYOUTS__PROVIDER ?? (production ? 'none' : 'fake');

  // Requests over a limit are always rejected at once with 429; waiting in a queue is not implemented.
  if (e.RateLimiting__QueueLimit !== 0) {
    throw new ConfigError('RateLimiting__QueueLimit must be 0: requests over a rate limit are rejected immediately with 429 (queueing is not supported)');
  }

  if (e.MIGRATION_DATABASE_URL && !e.DATABASE_URL) {
    throw new ConfigError('MIGRATION_DATABASE_URL is set without DATABASE_URL: set DATABASE_URL to the app role connection');
  }

  // The exact texts below are the specification's; operators grep for them.
  if (production) {
    if (!e.JWT__SIGNINGKEY) throw new ConfigError('JWT SigningKey must be configured via environment variable JWT__SIGNINGKEY');
    if (e.JWT__SIGNINGKEY === DEVELOPMENT_SIGNING_KEY) {
      throw new ConfigError('JWT SigningKey must be configured via environment variable JWT__SIGNINGKEY in production');
    }
    if (e.JWT__SIGNINGKEY.length < 32) throw new ConfigError('JWT SigningKey must be at least 32 characters long in production');
    // No wildcard anywhere (spec: "must not contain a wildcard"): `https://*.example.org` would never match an origin.
    if (corsOrigins.length === 0 || corsOrigins.some((origin) => origin.includes('*'))) throw new ConfigError('Cors:AllowedOrigins must be configured');
    if (new Set(e.JWT__SIGNINGKEY).size < 8) throw new ConfigError('JWT SigningKey must be random (it repeats too few distinct characters)');
    const unsafeOrigin = corsOrigins.find((origin) => !/^https:\/\/[^/\s]+$/.test(origin));
    if (unsafeOrigin) throw new ConfigError(`Cors:AllowedOrigins must list https:// origins only in production (got "${unsafeOrigin}")`);
    if (trustProviderClaims) {
      throw new ConfigError('AUTH__TRUSTPROVIDERCLAIMS must be false in production: identity provider tokens must be verified');
    }
    // The HTTPS redirect is built from it, never from the request's Host header (which a client chooses).
    if (!publicBaseUrl?.startsWith('https://')) throw new ConfigError('PUBLIC_BASE_URL must be configured in production as the https:// origin clients use');
    if (paymentsProvider === 'fake') throw new ConfigError('PAYMENTS__PROVIDER must not be fake in production: the fake gateway confirms payments no one made');
    if (payoutsProvider === 'fake') throw new ConfigError('PAYOUTS__PROVIDER must not be fake in production: the fake gateway reports transfers no one made');
    if (paymentsProvider !== 'none' && !e.PAYMENTS__WEBHOOKSECRET) {
      throw new ConfigError('PAYMENTS__WEBHOOKSECRET must be configured in production: webhooks of the payment gateway are verified with it');
    }
  }
  if (paymentsProvider === 'stripe') {
    if (!e.PAYMENTS__STRIPESECRETKEY || !/^(sk|rk)_/.test(e.PAYMENTS__STRIPESECRETKEY)) {
      throw new ConfigError('PAYMENTS__STRIPESECRETKEY must be configured with PAYMENTS__PROVIDER=stripe (a Stripe secret key, sk_... or rk_...)');
    }
    // Without it no event Stripe signs could be verified: every webhook would be refused and no checkout ever PAID.
    if (!e.PAYMENTS__WEBHOOKSECRET) {
      throw new ConfigError("PAYMENTS__WEBHOOKSECRET must be configured with PAYMENTS__PROVIDER=stripe: the webhook endpoint's signing secret (whsec_...)");
    }
    if (production && e.PAYMENTS__STRIPEAPIURL && !e.PAYMENTS__STRIPEAPIURL.startsWith('https://')) {
      throw new ConfigError('PAYMENTS__STRIPEAPIURL must be an https:// URL in production: the secret key travels with every request');
    }
  }

  return Object.freeze({
    env: e.NODE_ENV,
    production,
    port: e.PORT,
    host: e.HOST,
    role: e.ROLE,
    databaseUrl: e.DATABASE_URL,
    /** The owner role's URL: migrations and the app role's grants (src/db/roles.ts); unset = DATABASE_URL migrates. */
    migrationDatabaseUrl: e.MIGRATION_DATABASE_URL,
    /** Production: accept a superuser DATABASE_URL (refused otherwise, see src/db/roles.ts). */
    databaseAllowSuperuser: e.DATABASE_ALLOW_SUPERUSER,
    dataDir: e.DATA_DIR,
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    publicBaseUrl,
    /** Fastify's trustProxy: the proxies whose X-Forwarded-* headers count (CIDRs, `loopback`...), or a hop count. */
    trustProxy: trustProxyOf(e.TRUST_PROXY),
    logLevel: e.LOG_LEVEL,
    // Demo users include a SYSTEM_ADMIN anyone can log in as: never in production, whatever SEED_DEMO_DATA says.
    seedDemoData: e.SEED_DEMO_DATA && !production,
    /** Bearer token of `/metrics` in production (unset: /metrics is not served there). */
    metricsToken: e.METRICS__TOKEN,
    jwt: Object.freeze({
      signingKey: e.JWT__SIGNINGKEY || DEVELOPMENT_SIGNING_KEY,
      issuer: e.JWT__ISSUER,
      audience: e.JWT__AUDIENCE,
      expiresInSeconds: e.JWT__EXPIRESINSECONDS,
    }),
    auth: Object.freeze({
      trustProviderClaims,
      providers: parseProviders(e.AUTH__PROVIDERS),
      // `provider:externalId`: the provider's name in any case, the id exactly (a provider's subject is case-sensitive:
      // `Boss` and `boss` can be two accounts, and only the one named becomes an administrator).
      bootstrapAdmins: e.BOOTSTRAP_ADMINS.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .map((s) => {
          const colon = s.indexOf(':');
          return colon < 0 ? s : `${s.slice(0, colon).toLowerCase()}${s.slice(colon)}`;
        }),
    }),
    cors: Object.freeze({ allowedOrigins: corsOrigins.length ? corsOrigins : ['*'] }),
    rateLimit: Object.freeze({
      windowSeconds: e.RateLimiting__WindowSeconds || 60,
      queueLimit: e.RateLimiting__QueueLimit,
      global: e.RateLimiting__PermitLimit,
      auth: e.RateLimiting__Auth__PermitLimit,
      feedRead: e.RateLimiting__FeedRead__PermitLimit,
      write: e.RateLimiting__Write__PermitLimit,
      store: e.RateLimiting__Store,
    }),
    jobsEnabled: e.JOBS__ENABLED,
    payments: Object.freeze({
      provider: paymentsProvider as 'none' | 'fake' | 'stripe',
      webhookSecret: e.PAYMENTS__WEBHOOKSECRET || DEVELOPMENT_WEBHOOK_SECRET,
      stripe: Object.freeze({ secretKey: e.PAYMENTS__STRIPESECRETKEY ?? '', apiUrl: e.PAYMENTS__STRIPEAPIURL }),
    }),
    payouts: Object.freeze({ provider: payoutsProvider }),
  });
}

export type AppConfig = ReturnType<typeof loadConfig>;
