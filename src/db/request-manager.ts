import { EntityManager } from '@mikro-orm/postgresql';

/**
 * A REST request's EntityManager, forked on first use. Every request used to fork the ORM's manager up front
 * (`em.fork()`: a unit of work, an identity map, an entity factory and loader, and two configuration writes that
 * each set `process.env`): ~5-8 us of a by-id read on the profile (bench/PROFILE.md), for a read that never touches
 * an entity. Now `ctx.em` forks when first read, and a hot read (`runHotRead`) given the context itself, while no
 * fork exists, runs on the root manager's pool: it needs neither a unit of work nor a transaction.
 *
 * `em` is an accessor of this class, shared by every context: an accessor defined on each context, with a WeakMap of
 * the unforked ones, cost ~2-4 us a request (defining it, the WeakMap's ephemerons at every scavenge; bench/PROFILE.md,
 * eighth pass). A spread copy (`{ ...ctx, em: tx }`) is a plain object and carries no `em` unless it names one: every
 * copy names its manager (src/trpc/invoke.ts passes the context's own on when a middleware narrows the context).
 */
export class LazyForkContext {
  readonly #root: EntityManager;
  #forked: EntityManager | undefined;
  /** What the fork is given when it is made (`prepareManager`). */
  #prepare: ((em: EntityManager) => void) | undefined;

  constructor(root: EntityManager) {
    this.#root = root;
  }

  get em(): EntityManager {
    if (!this.#forked) {
      // Kept before it is prepared: a `prepare` that reads `em` gets this fork, not another one.
      const forked = (this.#forked = this.#root.fork() as EntityManager);
      this.#prepare?.(forked);
    }
    return this.#forked;
  }

  set em(manager: EntityManager) {
    this.#forked = manager;
  }

  /** The root manager of a context of this class that has not forked yet; undefined for anything else. */
  static unforkedRoot(source: object): EntityManager | undefined {
    return #root in source && !source.#forked ? source.#root : undefined;
  }

  /** `prepare` for the fork of a context of this class that has not forked yet (true), else nothing (false). */
  static prepareFork(source: object, prepare: (em: EntityManager) => void): boolean {
    if (!(#root in source) || source.#forked) return false;
    const earlier = source.#prepare;
    source.#prepare = earlier
      ? (em) => {
          earlier(em);
          prepare(em);
        }
      : prepare;
    return true;
  }
}

/** `fields` as a context whose `em` is a fork of `root` made when first read (or the manager assigned to it). */
export function withLazyFork<T extends object>(fields: T, root: EntityManager): LazyForkContext & T {
  return Object.assign(new LazyForkContext(root), fields);
}

/** What a hot read runs on: a manager, or a context holding one (`ctx`, so that reading it does not fork). */
export type HotReadSource = EntityManager | { readonly em: EntityManager };

/**
 * The root manager when `source` is a context whose fork has not been made: it started no transaction, so its hot
 * reads go to the pool (never into a transaction the async context may hold). Undefined otherwise.
 */
export function unforkedRoot(source: HotReadSource): EntityManager | undefined {
  return source instanceof EntityManager ? undefined : LazyForkContext.unforkedRoot(source);
}

/** The manager a hot read of `source` runs on when it is not an unforked context. */
export function managerOf(source: HotReadSource): EntityManager {
  return source instanceof EntityManager ? source : source.em;
}

/**
 * Gives the context's manager `prepare` (e.g. the client a journey acts through, src/entities/audit.entity.ts): now
 * when it has one, else when its fork is made, so that a call that never needs a manager does not fork for it.
 */
export function prepareManager(source: { readonly em: EntityManager }, prepare: (em: EntityManager) => void): void {
  if (!LazyForkContext.prepareFork(source, prepare)) prepare(source.em);
}
