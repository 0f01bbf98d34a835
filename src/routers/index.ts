import { router } from '../trpc/init.js';
import { territoriesRouter } from './territories/territories.router.js';

/** The whole API: every domain router. Its type is what the client SDK imports. */
export const appRouter = router({
  territories: territoriesRouter,
});

export type AppRouter = typeof appRouter;
