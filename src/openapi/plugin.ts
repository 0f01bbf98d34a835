import type { AnyProcedure, AnyRouter } from '@trpc/server';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { type RateBucket, rateLimitRouteConfig } from '../http/rate-limit.js';
import { decimalInput } from '../platform/numeric.js';
import { validationFailed } from '../platform/problems.js';
import { answerFromJourneyCache } from '../routers/journeys/journey-cache.js';
import { type AppDeps, createContext } from '../trpc/context.js';
import { invokeProcedure } from '../trpc/invoke.js';
import type { AppMeta } from '../trpc/init.js';

export interface RestOperation {
  /** Dotted tRPC path, e.g. `territories.byId`. */
  procedurePath: string;
  procedure: AnyProcedure;
  method: HTTPMethods;
  path: string;
  meta: AppMeta;
}

/** Every procedure that has `meta.openapi`, i.e. every REST operation. */
export function restOperations(router: AnyRouter): RestOperation[] {
  const out: RestOperation[] = [];
  for (const [procedurePath, procedure] of Object.entries(router._def.procedures as Record<string, AnyProcedure>)) {
    const meta = procedure._def.meta as AppMeta | undefined;
    if (!meta?.openapi || meta.openapi.enabled === false) continue;
    out.push({ procedurePath, procedure, method: meta.openapi.method, path: meta.openapi.path, meta });
  }
  return out;
}

export const bucketOf = (op: { method: string; meta: AppMeta }): RateBucket => op.meta.rateLimit ?? (op.method === 'GET' ? 'global' : 'write');

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The zod definition fields this file reads (zod 4 keeps them on `_zod.def`). */
type ZodDef = { type: string; coerce?: boolean; shape?: Record<string, ZodLike>; innerType?: ZodLike; in?: ZodLike; transform?: unknown };
type ZodLike = { _zod: { def: ZodDef } };
const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional']);

/** The schema under optional/default/... wrappers and on the input side of a pipe. */
function unwrapped(schema: ZodLike): ZodLike {
  let current = schema;
  for (;;) {
    const def = current._zod.def;
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else return current;
  }
}

/** The fields of an operation's input object, each under its wrappers (its inputs merged, as tRPC merges them). */
export function inputFields(procedure: AnyProcedure): Record<string, ZodLike> {
  const fields: Record<string, ZodLike> = {};
  for (const input of (procedure._def as unknown as { inputs?: ZodLike[] }).inputs ?? []) {
    for (const [key, field] of Object.entries(unwrapped(input)._zod.def.shape ?? {})) fields[key] = unwrapped(field);
  }
  return fields;
}

/**
 * The query keys an operation reads as numbers (`zNumeric`, or a `z.coerce.number()`): there an empty value (`?lat=`,
 * an unset form field) is absent, so a required number is a 400 and an optional one takes its default, instead of
 * `Number('') === 0` (the events near 0,0).
 */
export function numericQueryKeys(procedure: AnyProcedure): string[] {
  return Object.entries(inputFields(procedure))
    .filter(([, field]) => isNumericInput(field._zod.def))
    .map(([key]) => key);
}

/** `zNumeric`'s preprocess step (the input side of its pipe), or a coerced number. */
const isNumericInput = (def: ZodDef) => (def.type === 'transform' && def.transform === decimalInput) || (def.type === 'number' && def.coerce === true);

/**
 * Serves each OpenAPI procedure as a native Fastify route calling the same tRPC procedure. We do not use
 * trpc-to-openapi's adapter for serving (only for the document): it rewrites input schemas in place to coerce
 * strings (so `"false"` became `true` in bodies, for tRPC callers too), demands a JSON content type on body-less
 * POSTs and has its own error body. Here query and path values are coerced only where a schema says so
 * (`zNumeric`), errors go through the problem-details handler, and each route gets its rate-limit bucket.
 */
export function mountRestOperations(app: FastifyInstance, deps: AppDeps, router: AnyRouter) {
  for (const op of restOperations(router)) {
    const url = op.path.replace(/\{([^}]+)\}/g, ':$1');
    const cachedJourney = op.method === 'GET' ? op.meta.cachedJourney : undefined;
    const numericKeys = numericQueryKeys(op.procedure);
    const queryFields = op.method === 'GET' || op.method === 'DELETE' ? [] : (op.meta.queryFields ?? []);
    const fromQuery = (query: Record<string, unknown>) => {
      const picked: Record<string, unknown> = {};
      for (const key of queryFields) if (query[key] !== undefined) picked[key] = query[key];
      return picked;
    };
    app.route({
      method: op.method,
      url,
      config: { rateLimit: rateLimitRouteConfig(deps.config, bucketOf(op)) },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const params = (request.params ?? {}) as Record<string, string>;
        let input: Record<string, unknown>;
        if (op.method === 'GET' || op.method === 'DELETE') {
          input = { ...(request.query as Record<string, unknown>), ...params };
          for (const key of numericKeys) if (input[key] === '') delete input[key];
          if (cachedJourney && answerFromJourneyCache(request, reply, cachedJourney, op.path, input)) return reply;
        } else {
          const body = request.body ?? {};
          if (!isPlainObject(body)) throw validationFailed('(body)', 'the request body must be a JSON object');
          input = { ...fromQuery(request.query as Record<string, unknown>), ...body, ...params };
        }
        const ctx = createContext(deps, request, { transport: 'rest' });
        const result = await invokeProcedure(op.procedure, op.procedurePath, ctx, input);
        const status = ctx.resp.status ?? op.meta.successStatus ?? 200;
        reply.status(status).headers(ctx.resp.headers);
        if (status === 204) return reply.send();
        return reply.type('application/json').send(ctx.resp.json ?? JSON.stringify(result ?? null));
      },
    });
  }
}
