import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure, publicProcedure } from '../../trpc/procedures.js';
import {
  fiscalPackOutput,
  paymentMethodsOutput,
  putFiscalPackInput,
  putPaymentMethodsInput,
  territoryFiscalPackOutput,
  territoryIdInput,
} from './fiscal.schemas.js';
import * as fiscal from './fiscal.service.js';

const TAGS = ['Fiscal'];
const PACK_PATH = '/api/v1/territories/{territoryId}/fiscal-pack';
const METHODS_PATH = '/api/v1/territories/{territoryId}/payment-methods';

export const fiscalRouter = router({
  packs: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/fiscal-packs',
        tags: TAGS,
        summary: 'The fiscal packs a territory can bind, with their capabilities',
        protect: false,
      },
    })
    .input(z.object({}))
    .output(z.array(fiscalPackOutput))
    .query(({ ctx }) => fiscal.listFiscalPacks(ctx)),

  getPack: authedProcedure
    .meta({
      openapi: { method: 'GET', path: PACK_PATH, tags: TAGS, summary: "The territory's fiscal pack binding (members); without one: Off, isLegacyDefault" },
    })
    .input(territoryIdInput)
    .output(territoryFiscalPackOutput)
    .query(({ ctx, input }) => fiscal.getFiscalPack(ctx, input)),

  putPack: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: PACK_PATH,
        tags: TAGS,
        summary: 'Bind a fiscal pack to the territory (SYSTEM_ADMIN); activating a pix pack needs PIX among the payment methods (400)',
      },
    })
    .input(putFiscalPackInput)
    .output(territoryFiscalPackOutput)
    .mutation(({ ctx, input }) => fiscal.putFiscalPack(ctx, input)),

  getPaymentMethods: authedProcedure
    .meta({
      openapi: { method: 'GET', path: METHODS_PATH, tags: TAGS, summary: "The territory's payment methods (members); never configured: all three" },
    })
    .input(territoryIdInput)
    .output(paymentMethodsOutput)
    .query(({ ctx, input }) => fiscal.getPaymentMethods(ctx, input)),

  putPaymentMethods: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: METHODS_PATH,
        tags: TAGS,
        summary: 'Set the payment methods the territory accepts at checkout (SYSTEM_ADMIN); PIX stays while a pix pack is Active (400)',
      },
    })
    .input(putPaymentMethodsInput)
    .output(paymentMethodsOutput)
    .mutation(({ ctx, input }) => fiscal.putPaymentMethods(ctx, input)),
});
