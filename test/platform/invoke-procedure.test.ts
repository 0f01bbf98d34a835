import { initTRPC, TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Context } from '../../src/trpc/context.js';
import { invokeProcedure } from '../../src/trpc/invoke.js';

/**
 * The REST bridge calls procedures with `invokeProcedure` (src/trpc/invoke.ts), not with tRPC's caller: both must
 * run the same middlewares with the same context, input and errors. A small router is called both ways.
 */
const t = initTRPC.context<Context>().create();
const seen: string[] = [];
const procedure = t.procedure
  .use(({ ctx, next }) => {
    seen.push(`first:${ctx.ip}`);
    return next({ ctx: { user: { id: 'u1' } as Context['user'] } });
  })
  .use(({ ctx, next, path, type }) => {
    seen.push(`second:${ctx.user?.id}:${ctx.ip}:${path}:${type}`);
    return next();
  })
  .input(z.object({ n: z.coerce.number().int(), tag: z.string().default('none') }))
  .output(z.object({ doubled: z.number(), tag: z.string(), user: z.string() }))
  .query(({ ctx, input }) => {
    if (input.n < 0) throw new TRPCError({ code: 'BAD_REQUEST', message: 'negative' });
    return { doubled: input.n * 2, tag: input.tag, user: ctx.user?.id ?? '', extra: 'stripped by the output parser' };
  });
// Its resolver answers what its output schema refuses.
const badOutput = t.procedure.output(z.object({ n: z.number() })).query(() => ({ n: 'not a number' }) as unknown as { n: number });
const appRouter = t.router({ things: t.router({ double: procedure, bad: badOutput }) });
const caller = t.createCallerFactory(appRouter);
const ctx = { ip: '10.0.0.1', user: null } as unknown as Context;

async function both(input: unknown) {
  const outcome = async (run: () => Promise<unknown>) => {
    seen.length = 0;
    try {
      return { ok: true, value: await run(), seen: [...seen] };
    } catch (error) {
      return { ok: false, error: error instanceof TRPCError ? { code: error.code, message: error.message } : String(error), seen: [...seen] };
    }
  };
  const viaCaller = await outcome(() => caller(ctx).things.double(input as never));
  const viaInvoke = await outcome(() => invokeProcedure(procedure, 'things.double', ctx, input));
  return { viaCaller, viaInvoke };
}

describe('invokeProcedure', () => {
  it('answers what the tRPC caller answers: context passed on, input and output parsed', async () => {
    const { viaCaller, viaInvoke } = await both({ n: '21' });
    expect(viaInvoke).toEqual({
      ok: true,
      value: { doubled: 42, tag: 'none', user: 'u1' },
      seen: ['first:10.0.0.1', 'second:u1:10.0.0.1:things.double:query'],
    });
    expect(viaInvoke).toEqual(viaCaller);
  });

  it('throws what the tRPC caller throws: invalid input, an error in the resolver', async () => {
    for (const input of [{ n: 'x' }, { n: -1 }, undefined]) {
      const { viaCaller, viaInvoke } = await both(input);
      expect(viaInvoke.ok).toBe(false);
      expect(viaInvoke).toEqual(viaCaller);
    }
  });

  it('refuses an answer its output schema refuses, as the tRPC caller does', async () => {
    const viaCaller = await caller(ctx)
      .things.bad()
      .catch((error: TRPCError) => error);
    const viaInvoke = await invokeProcedure(badOutput, 'things.bad', ctx, undefined).catch((error: TRPCError) => error);
    expect(viaInvoke).toBeInstanceOf(TRPCError);
    expect({ code: (viaInvoke as TRPCError).code, message: (viaInvoke as TRPCError).message }).toEqual({
      code: 'INTERNAL_SERVER_ERROR',
      message: 'Output validation failed',
    });
    expect({ code: (viaInvoke as TRPCError).code, message: (viaInvoke as TRPCError).message }).toEqual({
      code: (viaCaller as TRPCError).code,
      message: (viaCaller as TRPCError).message,
    });
  });
});
