import { type AnyProcedure, getTRPCErrorFromUnknown, TRPCError } from '@trpc/server';
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
type Middleware = (options: MiddlewareOptions) => Promise<MiddlewareResult>;

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
  const def = procedure._def as unknown as { middlewares: Middleware[]; meta: unknown; type: string };
  const result = await runFrom(def.middlewares, 0, {
    ctx,
    type: def.type,
    path,
    input: undefined,
    getRawInput: () => Promise.resolve(input),
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
  // An anonymous function, not a named arrow: the tsx loader (development, bench) wraps every named closure it
  // creates in a naming helper, per call.
  return function (nextOptions) {
    return runFrom(middlewares, index, {
      ...options,
      ctx: nextOptions?.ctx ? { ...options.ctx, ...nextOptions.ctx } : options.ctx,
      input: nextOptions && 'input' in nextOptions ? nextOptions.input : options.input,
      getRawInput: nextOptions?.getRawInput ?? options.getRawInput,
    });
  };
}
