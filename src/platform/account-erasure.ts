/**
 * Account deletion reaches every domain that holds a person's data. Each domain erases its own tables through an
 * eraser it registers here (the composition root, src/routers/index.ts, registers them all), run inside the
 * deletion's transaction: this module writes no other domain's table, and a new domain holding personal data adds
 * one registration. What other people or the law need (posts and their threads, ledger and audit rows) stays,
 * pointing at the anonymised account.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Storage } from './storage.js';

export interface AccountErasure {
  /** The deletion's transaction. */
  em: EntityManager;
  userId: string;
  at: Date;
  storage: Storage;
  /** Work outside the database (stored files), run once the deletion has committed. */
  afterCommit(work: () => Promise<void>): void;
}

export type AccountEraser = (erasure: AccountErasure) => Promise<void>;

const erasers = new Map<string, AccountEraser>();

/** One eraser per domain; registering a domain twice replaces its eraser. */
export function registerAccountEraser(domain: string, eraser: AccountEraser) {
  erasers.set(domain, eraser);
}

export const accountErasers = (): ReadonlyMap<string, AccountEraser> => erasers;
