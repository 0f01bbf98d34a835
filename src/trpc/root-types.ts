import type { Context } from './context.js';
import type { formatError } from './error-shape.js';
import type { AppMeta } from './init.js';

/**
 * The root types of the one tRPC instance (src/trpc/init.ts), written out so the app router's type can name them
 * (src/routers/index.ts) and the client SDK's declaration bundle can carry them without the server-only modules.
 */
export interface RootTypes {
  ctx: Context;
  meta: AppMeta;
  errorShape: ReturnType<typeof formatError>;
  transformer: false;
}
