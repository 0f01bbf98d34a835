import pg from 'pg';
import { getConstructionPlans } from 'pg-boss';
import { type AppConfig, ConfigError } from '../config.js';
import { BOSS_SCHEMA } from '../jobs/boss.js';
import { migrateDatabase } from './orm.js';

/**
 * Database roles (security finding 8). Two roles:
 * - the migration (owner) role runs the migrations and owns the application tables: the embedded superuser, or
 *   MIGRATION_DATABASE_URL's role;
 * - the app role (HTTP and workers) has DML only: SELECT/INSERT/UPDATE/DELETE on the tables of `public`, sequences,
 *   INSERT+SELECT only on the append-only tables, and no DDL in `public`. It owns the pg-boss schema, because
 *   pg-boss creates and attaches queue partitions, creates and drops queue_stats partitions and builds indexes at
 *   run time (all of which need table ownership in PostgreSQL), and migrates its own schema on upgrades.
 */
export const APP_ROLE = 'territory_app';

/** Tables the app may read and append to, never change or delete from (the ledger's triggers refuse it too). */
export const APPEND_ONLY_TABLES: readonly string[] = ['audit_entry', 'ledger_transaction', 'ledger_entry', 'payment_webhook_event'];

/** MikroORM's record of applied migrations: the app reads it (an up-to-date `migrate` is a no-op), never writes it. */
const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/**
 * Creates the app role if missing and (re)applies its privileges in the database of `adminUrl`; idempotent, run
 * after every migration. `adminUrl` connects as the owner of the tables and must be a superuser or able to act as
 * the app role (`grant <app role> to <owner>`), because the pg-boss schema is created for and installed as the
 * app role. `password`: sets the role's password (created roles get it in any case), unless `keepExistingPassword`.
 */
export async function ensureAppRole(adminUrl: string, appRole: string, password?: string, options: { keepExistingPassword?: boolean } = {}): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const role = client.escapeIdentifier(appRole);
  try {
    await client.query('begin');
    // Several processes may start at once (roles are cluster-wide): one at a time.
    await client.query(`select pg_advisory_xact_lock(hashtext('territory-platform:ensure-app-role'))`);
    const me = (await client.query<{ name: string }>('select current_user as name')).rows[0]!.name;
    if (me === appRole) throw new Error(`The app role ${appRole} must differ from the migration role that owns the tables.`);
    const existing = (await client.query<{ rolsuper: boolean }>('select rolsuper from pg_roles where rolname = $1', [appRole])).rows[0];
    const secret = password === undefined ? '' : ` password ${client.escapeLiteral(password)}`;
    if (!existing) {
      await client.query(`create role ${role} login nosuperuser nocreatedb nocreaterole nobypassrls${secret}`);
    } else if (existing.rolsuper) {
      throw new Error(`The app role ${appRole} is a superuser: it must be a plain login role.`);
    } else if (secret && !options.keepExistingPassword) {
      await client.query(`alter role ${role} login${secret}`);
    }

    const database = (await client.query<{ name: string }>('select current_database() as name')).rows[0]!.name;
    await client.query(`grant connect on database ${client.escapeIdentifier(database)} to ${role}`);
    await client.query(`grant usage on schema public to ${role}`);
    // Databases created before PostgreSQL 15 let PUBLIC create in `public`: nobody but the owner should.
    const canCreate = async () => (await client.query<{ ok: boolean }>(`select has_schema_privilege($1, 'public', 'create') as ok`, [appRole])).rows[0]!.ok;
    if (await canCreate()) {
      await client.query('revoke create on schema public from public');
      await client.query(`revoke create on schema public from ${role}`);
      if (await canCreate()) throw new Error(`The app role ${appRole} may create objects in schema public (through another role?)`);
    }
    await client.query(`grant select, insert, update, delete on all tables in schema public to ${role}`);
    await client.query(`grant usage, select on all sequences in schema public to ${role}`);
    // Tables the migration role creates later get the same grants (append-only ones are revoked on the next run).
    await client.query(`alter default privileges in schema public grant select, insert, update, delete on tables to ${role}`);
    await client.query(`alter default privileges in schema public grant usage, select on sequences to ${role}`);
    for (const table of [...APPEND_ONLY_TABLES, MIGRATIONS_TABLE]) {
      const exists = (await client.query('select to_regclass($1) as t', [`public.${client.escapeIdentifier(table)}`])).rows[0]?.t;
      if (!exists) continue;
      const kept = table === MIGRATIONS_TABLE ? 'insert, update, delete' : 'update, delete';
      await client.query(`revoke ${kept}, truncate, references, trigger on table public.${client.escapeIdentifier(table)} from ${role}`);
    }
    await ownBossSchema(client, appRole);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    await client.end();
    throw error;
  }
  try {
    await installBoss(client, appRole);
  } finally {
    await client.end();
  }
}

/**
 * A server of DATABASE_URL: the migrations run as MIGRATION_DATABASE_URL's role (else as DATABASE_URL's: one role
 * for both, as before the split), then the app role gets its privileges. The role of DATABASE_URL is created with
 * its password when missing; an existing role's password is the operator's and is left alone.
 */
export async function prepareDatabase(appUrl: string, migrationUrl: string | undefined): Promise<void> {
  await migrateDatabase(migrationUrl ?? appUrl);
  if (!migrationUrl) return;
  const app = credentialsOf(appUrl);
  if (app.user && app.user !== credentialsOf(migrationUrl).user) {
    await ensureAppRole(migrationUrl, app.user, app.password, { keepExistingPassword: true });
  }
}

/** The pg-boss schema and everything in it belong to the app role (created so, or handed over from an older set-up). */
async function ownBossSchema(client: pg.Client, appRole: string) {
  const role = client.escapeIdentifier(appRole);
  const schema = client.escapeIdentifier(BOSS_SCHEMA);
  await client.query(`create schema if not exists ${schema} authorization ${role}`);
  await client.query(`alter schema ${schema} owner to ${role}`);
  // Objects made by another role (pg-boss installed by the superuser before the split). Sequences owned by a
  // column follow their table; indexes follow their table.
  const { rows } = await client.query<{ sql: string }>(
    `select format('alter %s %s owner to %I', kind, object, $2::text) as sql from (
       select case c.relkind when 'S' then 'sequence' when 'v' then 'view' when 'm' then 'materialized view' else 'table' end as kind,
              c.oid::regclass::text as object, c.relowner as owner
         from pg_class c
        where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
          and not (c.relkind = 'S' and exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype in ('a', 'i')))
       union all
       select 'routine', p.oid::regprocedure::text, p.proowner from pg_proc p where p.pronamespace = $1::regnamespace
       union all
       select 'type', t.oid::regtype::text, t.typowner from pg_type t where t.typnamespace = $1::regnamespace and t.typtype in ('e', 'd', 'r', 'm')
     ) o where o.owner <> (select oid from pg_roles where rolname = $2::text)`,
    [BOSS_SCHEMA, appRole],
  );
  for (const { sql } of rows) await client.query(sql);
}

/** Installs pg-boss's tables as the app role when missing (the app's own pg-boss then only checks and upgrades them). */
async function installBoss(client: pg.Client, appRole: string) {
  const installed = (await client.query('select to_regclass($1) as t', [`${client.escapeIdentifier(BOSS_SCHEMA)}.version`])).rows[0]?.t;
  if (installed) return;
  await client.query(`set role ${client.escapeIdentifier(appRole)}`);
  try {
    await client.query(getConstructionPlans(BOSS_SCHEMA, { createSchema: false }));
  } catch (error) {
    // Another process installed it meanwhile (pg-boss's own install tolerates the same race).
    if (!(error instanceof Error && error.message.includes('already exists'))) throw error;
  } finally {
    await client.query('reset role');
  }
}

/** The production refusal of a superuser app connection (a superuser can rewrite the audit trail, read files...). */
export const SUPERUSER_REFUSAL =
  'DATABASE_URL must not connect as a PostgreSQL superuser in production: use a least-privilege role (set DATABASE_ALLOW_SUPERUSER=true to allow it)';

/** Whether `url` logs in as a superuser. */
export async function isSuperuserConnection(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ rolsuper: boolean }>('select rolsuper from pg_roles where rolname = current_user')).rows[0]?.rolsuper ?? false;
  } finally {
    await client.end();
  }
}

/** Throws the refusal when production would run the app on a superuser connection without DATABASE_ALLOW_SUPERUSER. */
export async function refuseSuperuserInProduction(config: AppConfig, appUrl: string): Promise<void> {
  if (!config.production || config.databaseAllowSuperuser) return;
  if (await isSuperuserConnection(appUrl)) throw new ConfigError(SUPERUSER_REFUSAL);
}

/** Whether the role of `url` may update or delete rows of an append-only table (it owns them, or was granted too much). */
export async function mayRewriteAuditTrail(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ ok: boolean }>(
      `select coalesce(bool_or(has_table_privilege(c.oid, 'update') or has_table_privilege(c.oid, 'delete')), false) as ok
         from pg_class c where c.relnamespace = 'public'::regnamespace and c.relname = any($1::text[])`,
      [APPEND_ONLY_TABLES],
    );
    return rows[0]!.ok;
  } finally {
    await client.end();
  }
}

/** `url` with another user and password (the app role on the migration role's server and database). */
export function withCredentials(url: string, user: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(user);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** The user and password a URL logs in with. */
export function credentialsOf(url: string): { user: string; password?: string } {
  const parsed = new URL(url);
  return { user: decodeURIComponent(parsed.username), password: parsed.password ? decodeURIComponent(parsed.password) : undefined };
}
