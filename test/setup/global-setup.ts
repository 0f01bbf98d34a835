import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { randomPassword, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { createOrm, migrate } from '../../src/db/orm.js';
import { APP_ROLE, ensureAppRole } from '../../src/db/roles.js';
import { freePort } from '../platform/server-process.js';

export const TEMPLATE_DB = 'territory_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the server: creating databases, test set-up and assertions. */
    pgServerUrl: string;
    templateDb: string;
    /** The least-privilege role the apps under test connect as (src/db/roles.ts). */
    pgAppRole: string;
    pgAppPassword: string;
  }
}

/**
 * One real PostgreSQL per run (embedded, or the server of DATABASE_URL), and a template database migrated once
 * (application schema and pg-boss schema) with the app role's grants, as `npm start` does. Each test file clones it
 * (see test/setup/test-app.ts); the apps under test connect to their clone as the app role.
 */
export default async function setup(project: TestProject) {
  let serverUrl: string;
  let stop: () => Promise<void> = async () => {};
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '/postgres';
    serverUrl = url.toString();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'territory-test-pg-'));
    // The kernel's pick: a random port in the ephemeral range may be some outgoing connection's local port.
    const port = await freePort();
    const db = await startEmbeddedPostgres({ dir, port, persistent: false, fast: true });
    serverUrl = db.serverUrl;
    stop = async () => {
      await db.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }

  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE_DB}`);
  await admin.query(`create database ${TEMPLATE_DB}`);
  const templateUrl = new URL(serverUrl);
  templateUrl.pathname = `/${TEMPLATE_DB}`;

  const orm = await createOrm(templateUrl.toString());
  // Trigram indexes (territory search) need pg_trgm before orm.schema.update() creates them.
  await orm.em.getConnection().execute('create extension if not exists pg_trgm');
  await migrate(orm);
  // Entities changed since the last committed migration still get their tables here; the migration check in
  // CI (npm run db:migration:check) is what fails when a migration is missing.
  await orm.schema.update();
  await orm.close();
  // Grants are copied with the template; the role is cluster-wide, its password new on every run.
  const appPassword = randomPassword();
  await ensureAppRole(templateUrl.toString(), APP_ROLE, appPassword);
  await admin.end();

  project.provide('pgServerUrl', serverUrl);
  project.provide('templateDb', TEMPLATE_DB);
  project.provide('pgAppRole', APP_ROLE);
  project.provide('pgAppPassword', appPassword);
  return stop;
}
