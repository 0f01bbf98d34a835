import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../src/db/embedded.js';

/** Runs `fn` against a throw-away embedded PostgreSQL database (or DATABASE_URL when set). */
export async function withTempDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  if (process.env.DATABASE_URL) return fn(process.env.DATABASE_URL);
  const dir = mkdtempSync(join(tmpdir(), 'territory-pg-'));
  const port = 56000 + Math.floor(Math.random() * 4000);
  const db = await startEmbeddedPostgres({ dir, port, persistent: false, fast: true });
  try {
    await db.createDatabase('scratch');
    return await fn(db.url('scratch'));
  } finally {
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
