import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { walletIdInput, walletOutput } from '../payouts/payouts.schemas.js';
import { getWallet } from '../payouts/seller-balance.service.js';

export const walletsRouter = router({
  byId: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/wallets/{walletId}',
        tags: ['Payouts'],
        summary: 'A seller wallet (walletId = the seller balance id), holder only; balance = (pending + ready) / 100, projected from the ledger',
      },
    })
    .input(walletIdInput)
    .output(walletOutput)
    .query(({ ctx, input }) => getWallet(ctx, input)),
});
