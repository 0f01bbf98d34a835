import { EntityManager } from '@mikro-orm/postgresql';

/**
 * A REST request's EntityManager, forked on first use. Every request used to fork the ORM's manager up front
 * (`em.fork()`: a unit of work, an identity map, an entity factory and loader, and two configuration writes that
 * each set `process.env`): ~5-8 us of a by-id read on the profile (bench/PROFILE.md), for a read that never touches
 * an entity. Now `ctx.em` forks when first read, and a hot read (`runHotRead`) given the context itself, while no
 * fork exists, runs on the root manager's pool: it needs neither a unit of work nor a transaction.
 */

/** Contexts whose `em` has not been forked yet, with the manager their hot reads use meanwhile. */
const unforked = new WeakMap<object, EntityManager>();

/**
 * Gives `target` an enumerable `em`: a fork of `root` made when first read (or the manager assigned to it). A copy
 * of the context (`{ ...ctx, em: tx }`) is a plain object with its own `em`, never mistaken for the unforked one.
 */
export function withLazyFork<T extends object>(target: T, root: EntityManager): T & { em: EntityManager } {
  let forked: EntityManager | undefined;
  unforked.set(target, root);
  return Object.defineProperty(target, 'em', {
    enumerable: true,
    configurable: true,
    get(): EntityManager {
      if (!forked) {
        forked = root.fork() as EntityManager;
        unforked.delete(target);
      }
      return forked;
    },
    set(manager: EntityManager) {
      forked = manager;
      unforked.delete(target);
    },
  }) as T & { em: EntityManager };
}

/** What a hot read runs on: a manager, or a context holding one (`ctx`, so that reading it does not fork). */
export type HotReadSource = EntityManager | { readonly em: EntityManager };

/**
 * The root manager when `source` is a context whose fork has not been made: it started no transaction, so its hot
 * reads go to the pool (never into a transaction the async context may hold). Undefined otherwise.
 */
export function unforkedRoot(source: HotReadSource): EntityManager | undefined {
  return source instanceof EntityManager ? undefined : unforked.get(source);
}

/** The manager a hot read of `source` runs on when it is not an unforked context. */
export function managerOf(source: HotReadSource): EntityManager {
  return source instanceof EntityManager ? source : source.em;
}
