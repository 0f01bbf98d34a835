import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import {
  myPayoutsInput,
  payoutConfigInput,
  payoutConfigOutput,
  payoutListInput,
  payoutPageOutput,
  payoutRunOutput,
  sellerBalanceInput,
  sellerBalanceOutput,
  sellerTransactionOutput,
  sellerTransactionsInput,
  territoryIdInput,
} from './payouts.schemas.js';
import { listMyPayouts, listPayouts, requestPayoutRun } from './payouts.service.js';
import { getPayoutConfig, putPayoutConfig } from './payout-config.service.js';
import { getMySellerBalance, getMySellerTransactions } from './seller-balance.service.js';
import { refundCheckout } from './refunds.service.js';
import { checkoutIdInput, checkoutOutput } from '../checkouts/checkouts.schemas.js';

const TAGS = ['Payouts'];
const CONFIG_PATH = '/api/v1/territories/{territoryId}/payout-config';
const BALANCE_PATH = '/api/v1/territories/{territoryId}/seller-balance/me';

export const payoutsRouter = router({
  putConfig: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: CONFIG_PATH,
        tags: TAGS,
        summary:
          "Create (201) or replace (200) the territory's payout configuration (SYSTEM_ADMIN or FINANCIAL_MANAGER); requiresApproval is stored, not acting",
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(payoutConfigInput)
    .output(payoutConfigOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, config } = await putPayoutConfig(ctx, input);
      if (!created) ctx.resp.status = 200;
      return config;
    }),

  getConfig: authedProcedure
    .meta({ openapi: { method: 'GET', path: CONFIG_PATH, tags: TAGS, summary: "The territory's active payout configuration (members); 404 before any" } })
    .input(territoryIdInput)
    .output(payoutConfigOutput)
    .query(({ ctx, input }) => getPayoutConfig(ctx, input)),

  myBalance: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: BALANCE_PATH,
        tags: TAGS,
        summary:
          'My seller balance in the territory in one currency (`currency`, default: that of my latest sale), projected from the ledger, with the currencies of my other balances; 404 NO_SELLER_BALANCE before the first paid sale (in that currency)',
      },
    })
    .input(sellerBalanceInput)
    .output(sellerBalanceOutput)
    .query(({ ctx, input }) => getMySellerBalance(ctx, input)),

  myTransactions: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BALANCE_PATH}/transactions`,
        tags: TAGS,
        summary: 'My seller transactions in the territory, newest first, by `skip` and `take` (default 20); 404 NO_SELLER_BALANCE before the first paid sale',
      },
    })
    .input(sellerTransactionsInput)
    .output(z.array(sellerTransactionOutput))
    .query(({ ctx, input }) => getMySellerTransactions(ctx, input)),

  myPayouts: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${BALANCE_PATH}/payouts`,
        tags: TAGS,
        summary: 'My payouts in the territory, newest first; 404 NO_SELLER_BALANCE before the first paid sale',
      },
    })
    .input(myPayoutsInput)
    .output(payoutPageOutput)
    .query(({ ctx, input }) => listMyPayouts(ctx, input)),

  runPayouts: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/territories/{territoryId}/payouts/run',
        tags: TAGS,
        summary:
          "Run the territory's payouts now, whatever its frequency (SYSTEM_ADMIN or FINANCIAL_MANAGER): 202 with the payouts-run job's id; the payouts settle in the background",
      },
      successStatus: 202,
    })
    .input(territoryIdInput)
    .output(payoutRunOutput)
    .mutation(({ ctx, input }) => requestPayoutRun(ctx, ctx.deps.jobs, input)),

  listPayouts: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/territories/{territoryId}/payouts',
        tags: TAGS,
        summary: "The territory's payouts, newest first, optionally of one status or seller (SYSTEM_ADMIN or FINANCIAL_MANAGER)",
      },
    })
    .input(payoutListInput)
    .output(payoutPageOutput)
    .query(({ ctx, input }) => listPayouts(ctx, input)),

  refundCheckout: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/checkouts/{checkoutId}/refund',
        tags: ['Marketplace'],
        summary: 'Refund a PAID checkout not yet paid out (store owner or SYSTEM_ADMIN; else 409): the ledger reverses the sale',
      },
    })
    .input(checkoutIdInput)
    .output(checkoutOutput)
    .mutation(({ ctx, input }) => refundCheckout(ctx, input)),
});
