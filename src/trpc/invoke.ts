import { type AnyProcedure, getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
import { getParseFn } from '@trpc/server/unstable-core-do-not-import';
import type { Context } from './context.js';

/** What a tRPC middleware receives and answers (the library's own shapes, for the parts used here). */
interface MiddlewareOptions {
  ctx: Context;
  type: string;
  path: string;
  input: unknown;
  getRawInput: () => Promise<unknown>;
  meta: unknown;
  signal: undefined;
  batchIndex: number;
  next?: (nextOptions?: { ctx?: Partial<Context>; input?: unknown; getRawInput?: () => Promise<unknown> }) => Promise<MiddlewareResult>;
}
type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };
type Middleware = ((options: MiddlewareOptions) => Promise<MiddlewareResult>) & { _type?: string };
interface ProcedureDef {
  middlewares: Middleware[];
  meta: unknown;
  type: string;
  output?: unknown;
}

/**
 * Calls a procedure as tRPC's own caller does (`createCaller(ctx).path(input)`): its middlewares in order (the call
 * pipeline, the access checks, input parsing, output parsing, the resolver), each `next()` running the following
 * one, a thrown error answered as a failed result, a failed result thrown at the end.
 *
 * Why not the caller itself: it builds a proxy per call, and its middleware runner copies the whole call options
 * twice per level with a transpiled object-spread helper (Babel's `_objectSpread2`: key by key, with property
 * descriptors); five levels made that ~10% of the CPU of a REST read (bench/PROFILE.md). Native spreads copy
 * the same fields at a fraction of the cost. The REST bridge alone uses this; /trpc calls go through tRPC's handler.
 */
export async function invokeProcedure(procedure: AnyProcedure, path: string, ctx: Context, input: unknown): Promise<unknown> {
  const def = procedure._def as unknown as ProcedureDef;
  const result = await runFrom(middlewaresOf(procedure, def), 0, {
    ctx,
    type: def.type,
    path,
    input: undefined,
    // Bound, not an arrow: under tsx (development) an arrow in a property is wrapped in a naming helper per call.
    getRawInput: Promise.resolve.bind(Promise, input) as () => Promise<unknown>,
    meta: def.meta,
    signal: undefined,
    batchIndex: 0,
  });
  if (!result) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from the middlewares.' });
  if (!result.ok) throw result.error;
  return result.data;
}

async function runFrom(middlewares: Middleware[], index: number, options: MiddlewareOptions): Promise<MiddlewareResult> {
  try {
    return await middlewares[index]!({ ...options, next: nextOf(middlewares, index + 1, options) });
  } catch (cause) {
    return { ok: false, error: getTRPCErrorFromUnknown(cause) };
  }
}

/** `next` of a level: the following middleware, with the context and input this level passes on. */
function nextOf(middlewares: Middleware[], index: number, options: MiddlewareOptions): NonNullable<MiddlewareOptions['next']> {
  // An anonymous function, not a named arrow: the tsx loader (development) wraps every named closure it
  // creates in a naming helper, per call.
  return function (nextOptions) {
    return runFrom(middlewares, index, {
      ...options,
      // A REST context's `em` is an accessor of its class (src/db/request-manager.ts), which a spread does not copy.
      ctx: nextOptions?.ctx ? { ...options.ctx, em: options.ctx.em, ...nextOptions.ctx } : options.ctx,
      input: nextOptions && 'input' in nextOptions ? nextOptions.input : options.input,
      getRawInput: nextOptions?.getRawInput ?? options.getRawInput,
    });
  };
}

const runnable = new WeakMap<AnyProcedure, Middleware[]>();

/**
 * A procedure's middlewares as this runner calls them: tRPC's own, except its output parser, replaced by the same
 * parse with a native spread. tRPC's copies the result (which carries the context too) with the transpiled
 * `_objectSpread2`, ~4 us a REST read on the profile (bench/PROFILE.md). Only when the procedure has one output
 * parser, the one `_def.output` names; otherwise tRPC's own run.
 */
function middlewaresOf(procedure: AnyProcedure, def: ProcedureDef): Middleware[] {
  let middlewares = runnable.get(procedure);
  if (!middlewares) {
    const outputs = def.middlewares.filter((m) => m._type === 'output').length;
    middlewares =
      outputs === 1 && def.output !== undefined
        ? def.middlewares.map((m) => (m._type === 'output' ? outputMiddleware(getParseFn(def.output as never)) : m))
        : def.middlewares;
    runnable.set(procedure, middlewares);
  }
  return middlewares;
}

/** tRPC's output middleware (`createOutputMiddleware`): the same parse, the same error, a native copy. */
function outputMiddleware(parse: (value: unknown) => unknown): Middleware {
  return async function (options) {
    const result = await options.next!();
    if (!result.ok) return result;
    let data: unknown;
    try {
      data = await parse(result.data);
    } catch (cause) {
      throw new TRPCError({ message: 'Output validation failed', code: 'INTERNAL_SERVER_ERROR', cause });
    }
    return { ...result, data };
  };
}
