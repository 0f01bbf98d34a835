import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import {
  expensePageOutput,
  financeBalanceInput,
  financeListInput,
  financialTransactionDetailOutput,
  financialTransactionInput,
  financialTransactionListInput,
  financialTransactionPageOutput,
  platformBalanceOutput,
  revenuePageOutput,
} from './finance.schemas.js';
import { getFinancialTransaction, getPlatformBalance, getPlatformExpenses, getPlatformRevenue, listFinancialTransactions } from './finance.service.js';

const TAGS = ['Payouts'];
const PATH = '/api/v1/territories/{territoryId}/platform-financial';

export const financeRouter = router({
  balance: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${PATH}/balance`,
        tags: TAGS,
        summary: "The territory's platform balance: fees collected, payouts processed (SYSTEM_ADMIN or FINANCIAL_MANAGER)",
      },
    })
    .input(financeBalanceInput)
    .output(platformBalanceOutput)
    .query(({ ctx, input }) => getPlatformBalance(ctx, input)),

  revenue: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${PATH}/revenue`,
        tags: TAGS,
        summary: 'Fees collected, newest first; a refund is a negative line (SYSTEM_ADMIN or FINANCIAL_MANAGER)',
      },
    })
    .input(financeListInput)
    .output(revenuePageOutput)
    .query(({ ctx, input }) => getPlatformRevenue(ctx, input)),

  expenses: authedProcedure
    .meta({
      openapi: { method: 'GET', path: `${PATH}/expenses`, tags: TAGS, summary: 'Payouts processed, newest first (SYSTEM_ADMIN or FINANCIAL_MANAGER)' },
    })
    .input(financeListInput)
    .output(expensePageOutput)
    .query(({ ctx, input }) => getPlatformExpenses(ctx, input)),

  transactions: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${PATH}/transactions`,
        tags: TAGS,
        summary:
          'Every amount of the territory as a financial transaction (CHECKOUT, PAYMENT, SELLER, PLATFORM_FEE, PAYOUT, REFUND), newest first (SYSTEM_ADMIN or FINANCIAL_MANAGER)',
      },
    })
    .input(financialTransactionListInput)
    .output(financialTransactionPageOutput)
    .query(({ ctx, input }) => listFinancialTransactions(ctx, input)),

  transaction: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${PATH}/transactions/{financialTransactionId}`,
        tags: TAGS,
        summary: 'One financial transaction with its status history (SYSTEM_ADMIN or FINANCIAL_MANAGER); 404 unknown here',
      },
    })
    .input(financialTransactionInput)
    .output(financialTransactionDetailOutput)
    .query(({ ctx, input }) => getFinancialTransaction(ctx, input)),
});
