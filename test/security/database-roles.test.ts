import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { embeddedSuperuserUrl, startEmbeddedPostgres, superuserPasswordFile } from '../../src/db/embedded.js';
import { APP_ROLE, ensureAppRole, isSuperuserConnection, mayRewriteAuditTrail, refuseSuperuserInProduction, SUPERUSER_REFUSAL } from '../../src/db/roles.js';
import { BOSS_SCHEMA } from '../../src/jobs/boss.js';
import { freePort, lines, serverExit } from '../platform/server-process.js';
import { PRODUCTION_ENV } from '../platform/support.js';
import { appDatabaseUrl, createTestApp, createTestDatabase, type TestApp } from '../setup/test-app.js';

/** The SQLSTATE of a statement, or 'ok'. */
async function sqlState(client: pg.Client, text: string, params: unknown[] = []): Promise<string> {
  try {
    await client.query(text, params);
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

const PERMISSION_DENIED = '42501';
const MUST_BE_OWNER = '42501';

describe('the app connects as a least-privilege role (security finding 8)', () => {
  let t: TestApp;
  let adminUrl: string;
  let app: pg.Client;

  beforeAll(async () => {
    t = await createTestApp();
    adminUrl = await createTestDatabase();
    app = new pg.Client({ connectionString: appDatabaseUrl(adminUrl) });
    await app.connect();
  });
  afterAll(async () => {
    await app?.end();
    await t?.close();
  });

  it('the app under test runs as the app role, which is no superuser', async () => {
    const [row] = await t.deps.orm.em.getConnection().execute<{ user: string }[]>('select current_user as "user"');
    expect(row?.user).toBe(APP_ROLE);
    expect(await isSuperuserConnection(t.databaseUrl)).toBe(false);
    expect(await isSuperuserConnection(adminUrl)).toBe(true);
  });

  it('reads and writes the ordinary tables (insert, select, update, delete)', async () => {
    const key = `test.roles.${Date.now()}`;
    expect(await sqlState(app, `insert into system_config (key, value, created_at_utc, updated_at_utc) values ($1, 'a', now(), now())`, [key])).toBe('ok');
    expect(await sqlState(app, `update system_config set value = 'b' where key = $1`, [key])).toBe('ok');
    expect((await app.query(`select value from system_config where key = $1`, [key])).rows).toEqual([{ value: 'b' }]);
    expect(await sqlState(app, `delete from system_config where key = $1`, [key])).toBe('ok');
  });

  it('may only append to and read the audit trail: update and delete are permission denied', async () => {
    const id = crypto.randomUUID();
    expect(
      await sqlState(app, `insert into audit_entry (id, created_at_utc, action, subject_type, data) values ($1, now(), 'test.appended', 'test', '{}')`, [id]),
    ).toBe('ok');
    expect((await app.query('select action from audit_entry where id = $1', [id])).rows).toEqual([{ action: 'test.appended' }]);
    expect(await sqlState(app, `update audit_entry set action = 'test.rewritten' where id = $1`, [id])).toBe(PERMISSION_DENIED);
    expect(await sqlState(app, 'delete from audit_entry where id = $1', [id])).toBe(PERMISSION_DENIED);
    expect(await sqlState(app, 'truncate audit_entry')).toBe(PERMISSION_DENIED);
    expect((await app.query('select action from audit_entry where id = $1', [id])).rows).toEqual([{ action: 'test.appended' }]);
    expect(await mayRewriteAuditTrail(appDatabaseUrl(adminUrl))).toBe(false);
    expect(await mayRewriteAuditTrail(adminUrl)).toBe(true);
  });

  it('runs no DDL in public: no create, drop, alter or truncate, and no writes to the migration record', async () => {
    expect(await sqlState(app, 'create table public.intruder (id int)')).toBe(PERMISSION_DENIED);
    expect(await sqlState(app, 'create table intruder (id int)')).toBe(PERMISSION_DENIED);
    expect(await sqlState(app, 'drop table system_config')).toBe(MUST_BE_OWNER);
    expect(await sqlState(app, 'alter table audit_entry disable trigger all')).toBe(MUST_BE_OWNER);
    expect(await sqlState(app, 'truncate system_config')).toBe(PERMISSION_DENIED);
    expect(await sqlState(app, 'create schema intruder')).toBe(PERMISSION_DENIED);
    expect(await sqlState(app, 'select count(*) from mikro_orm_migrations')).toBe('ok');
    expect(await sqlState(app, 'delete from mikro_orm_migrations')).toBe(PERMISSION_DENIED);
  });

  it('gets the same rights on tables a later migration creates (default privileges)', async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query('create table later_table (id int primary key, note text)');
      expect(await sqlState(app, `insert into later_table values (1, 'x')`)).toBe('ok');
      expect(await sqlState(app, `update later_table set note = 'y'`)).toBe('ok');
      expect(await sqlState(app, 'delete from later_table')).toBe('ok');
      expect(await sqlState(app, 'drop table later_table')).toBe(MUST_BE_OWNER);
    } finally {
      await admin.end();
    }
  });

  it('ensureAppRole is idempotent and leaves the audit trail append-only', async () => {
    await ensureAppRole(adminUrl, APP_ROLE, undefined);
    await ensureAppRole(adminUrl, APP_ROLE, undefined);
    expect(await sqlState(app, 'delete from audit_entry')).toBe(PERMISSION_DENIED);
    expect(await sqlState(app, 'select 1 from app_user limit 1')).toBe('ok');
  });

  it('refuses to act as both the migration role and the app role', async () => {
    const admin = new URL(adminUrl);
    await expect(ensureAppRole(adminUrl, decodeURIComponent(admin.username))).rejects.toThrow(/must differ/);
  });

  it('runs pg-boss as the app role: new queues (partition tables) are created at run time', async () => {
    const boss = new PgBoss({ connectionString: appDatabaseUrl(adminUrl), schema: BOSS_SCHEMA, supervise: false, schedule: false });
    boss.on('error', () => {});
    await boss.start();
    try {
      const queue = `roles-test-${Date.now()}`;
      await boss.createQueue(queue, { partition: true });
      const id = await boss.send(queue, { n: 1 });
      const [job] = await boss.fetch(queue);
      expect(job?.id).toBe(id);
      await boss.complete(queue, job!.id);
      await boss.deleteQueue(queue);
    } finally {
      await boss.stop({ graceful: false });
    }
    const { rows } = await app.query<{ owner: string }>(`select nspowner::regrole::text as owner from pg_namespace where nspname = $1`, [BOSS_SCHEMA]);
    expect(rows).toEqual([{ owner: APP_ROLE }]);
  });

  it('production refuses a superuser connection with the message, and allows it with DATABASE_ALLOW_SUPERUSER=true', async () => {
    const production = loadConfig({ ...PRODUCTION_ENV, DATABASE_URL: adminUrl });
    const refusal = refuseSuperuserInProduction(production, adminUrl);
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refuseSuperuserInProduction(production, adminUrl)).rejects.toThrow(SUPERUSER_REFUSAL);

    const allowed = loadConfig({ ...PRODUCTION_ENV, DATABASE_URL: adminUrl, DATABASE_ALLOW_SUPERUSER: 'true' });
    await expect(refuseSuperuserInProduction(allowed, adminUrl)).resolves.toBeUndefined();
    // The app role passes, and outside production nothing is refused.
    await expect(refuseSuperuserInProduction(production, appDatabaseUrl(adminUrl))).resolves.toBeUndefined();
    await expect(refuseSuperuserInProduction(loadConfig({ NODE_ENV: 'test' }), adminUrl)).resolves.toBeUndefined();
  });

  it('the server process exits 1 with the message on a superuser DATABASE_URL in production', async () => {
    const { code, stderr } = await serverExit({ ...PRODUCTION_ENV, DATABASE_URL: adminUrl });
    expect(code).toBe(1);
    expect(lines(stderr)).toContain(SUPERUSER_REFUSAL);
  });
});

describe('the embedded PostgreSQL has no fixed password', () => {
  it('generates the superuser password at initdb, keeps it in a 0600 file and reuses it on the next start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'territory-embedded-'));
    chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as the `postgres` user, who must reach the cluster
    const dir = join(dataDir, 'pg');
    const port = await freePort();
    try {
      let db = await startEmbeddedPostgres({ dir, port, persistent: true, fast: true });
      const file = superuserPasswordFile(dir);
      expect(file).toBe(join(dataDir, 'pg-superuser-password'));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const password = readFileSync(file, 'utf8').trim();
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect(db.serverUrl).toContain(password);
      await db.stop();

      db = await startEmbeddedPostgres({ dir, port, persistent: true, fast: true });
      try {
        expect(readFileSync(file, 'utf8').trim()).toBe(password);
        expect(await isSuperuserConnection(embeddedSuperuserUrl(dir, port, 'postgres'))).toBe(true);
        // The old fixed password no longer opens it.
        const legacy = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
        await expect(legacy.connect()).rejects.toThrow(/password authentication failed/);
      } finally {
        await db.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
