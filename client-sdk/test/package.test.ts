/**
 * The SDK as its users get it: built and packed (`npm pack`), installed from the tarball into a new project outside
 * the repository, type-checked there with `tsc --strict` (the examples, whose `@ts-expect-error` lines must meet
 * their errors), and the example run by plain Node against a live server.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../../src/db/seed/demo.js';
import { API_VERSION } from '../../src/platform/version.js';
import { createTestApp, type TestApp } from '../../test/setup/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SDK = join(ROOT, 'client-sdk');
const run = promisify(execFile);

/** The versions the repository itself uses, so the install is served from the npm cache. */
const rootPackage = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
const TYPESCRIPT = `typescript@${rootPackage.devDependencies.typescript}`;
const NODE_TYPES = `@types/node@${rootPackage.devDependencies['@types/node']}`;

/**
 * The environment of the child commands: Node 24 of the repository first on PATH, without the variables `npm test`
 * sets for its own package (an npm started from them could take the repository for the project being installed).
 */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_|^npm_config_(local_prefix|prefix|workspaces?|include_workspace_root)$|^INIT_CWD$/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`;
  return { ...env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false', ...extra };
}

const timed = async <T>(label: string, work: () => Promise<T>) => {
  const started = Date.now();
  const result = await work();
  console.log(`client-sdk package test: ${label} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
};

let t: TestApp;
let baseUrl: string;
let consumer: string;
let tarball: string;

beforeAll(async () => {
  consumer = mkdtempSync(join(tmpdir(), 'client-sdk-consumer-'));
  // The server starts while the SDK builds.
  const server = (async () => {
    t = await createTestApp();
    await seedDemoData(t.deps.orm.em.fork(), t.deps.config);
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  })();

  // The package is built and packed from a staging copy of client-sdk/ (its package.json, README and openapi.json,
  // as `files` lists them): the same build script and manifest as `npm pack` in client-sdk/ (whose `prepack` runs
  // the build), without writing client-sdk/dist, which another test run in the same checkout may be reading.
  const stage = join(consumer, 'stage');
  for (const file of ['package.json', 'README.md', 'openapi.json']) cpSync(join(SDK, file), join(stage, file));
  await timed('SDK build', () =>
    run(process.execPath, ['--import', 'tsx', join(SDK, 'scripts', 'build.ts'), '--out-dir', join(stage, 'dist')], {
      cwd: ROOT,
      env: childEnv(),
      timeout: 150_000,
    }),
  );
  await timed('npm pack', () => run('npm', ['pack', '--ignore-scripts', '--pack-destination', consumer, '--loglevel=error'], { cwd: stage, env: childEnv() }));
  const packed = readdirSync(consumer).filter((f) => f.endsWith('.tgz'));
  expect(packed).toHaveLength(1);
  tarball = join(consumer, packed[0] as string);
  rmSync(stage, { recursive: true, force: true });

  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }, null, 2));
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          // Checking the 1 MB of bundled declarations themselves would triple the time; what would go wrong there is
          // caught anyway: the build refuses declarations importing packages a consumer lacks, and types decayed to
          // `any` would leave the examples' @ts-expect-error lines unused, which fails the compilation.
          skipLibCheck: true,
        },
        files: ['list-territories.ts', 'typed-calls.ts'],
      },
      null,
      2,
    ),
  );
  for (const example of ['list-territories.ts', 'typed-calls.ts']) copyFileSync(join(SDK, 'examples', example), join(consumer, example));

  await timed('npm install of the tarball', () =>
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, TYPESCRIPT, NODE_TYPES], {
      cwd: consumer,
      env: childEnv(),
      timeout: 120_000,
    }),
  );
  await server;
}, 300_000);

afterAll(async () => {
  await t?.close();
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

describe('the packed client SDK', () => {
  it('ships the built JavaScript and bundled declarations, versioned as the API', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean).sort();
    expect(files).toEqual(
      expect.arrayContaining(['package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/rest.js', 'package/dist/rest.d.ts']),
    );
    expect(files.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/') || f.startsWith('package/scripts/'))).toEqual([]);

    const installed = JSON.parse(readFileSync(join(consumer, 'node_modules', '@territory-platform', 'client-sdk', 'package.json'), 'utf8'));
    expect(installed.version).toBe(API_VERSION);
    expect(installed.exports['.'].default).toBe('./dist/index.js');
    expect(installed.peerDependencies).toHaveProperty('@trpc/server');

    // Inlined server types must not drag the server's packages along: the declarations import only these.
    const allowed = ['@trpc/client', '@trpc/server', '@trpc/server/unstable-core-do-not-import', 'openapi-fetch'];
    for (const file of ['index.d.ts', 'rest.d.ts']) {
      const declarations = readFileSync(join(consumer, 'node_modules', '@territory-platform', 'client-sdk', 'dist', file), 'utf8');
      const imported = [...declarations.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1] as string);
      expect(imported.filter((name) => !allowed.includes(name))).toEqual([]);
    }
  });

  it('type-checks the examples with tsc --strict: typed calls compile, wrong procedures and inputs do not', async () => {
    const tsc = join(consumer, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await timed('tsc --strict', () =>
      run(process.execPath, [tsc, '-p', consumer], { cwd: consumer, env: childEnv(), timeout: 120_000 }).then(
        () => ({ ok: true, output: '' }),
        (error: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
      ),
    );
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  });

  it('runs the example with plain Node against a live server, over tRPC and REST', async () => {
    const seeded = await t.sql<{ name: string }>(`select name from territory where status = 'ACTIVE' order by name`);
    expect(seeded.length).toBeGreaterThan(0);

    // Node 24 strips the example's types itself: no tsx, no build step, as in a user's project.
    const { stdout } = await run(process.execPath, ['list-territories.ts'], { cwd: consumer, env: childEnv({ API_URL: baseUrl }), timeout: 60_000 });

    expect(stdout).toContain('logged in as Demo Visitor');
    const [trpcPart, restPart] = stdout.split('REST GET /api/v1/territories');
    expect(trpcPart).toContain(`tRPC territories.list: ${seeded.length} territories`);
    expect(restPart).toContain(`: ${seeded.length} territories`);
    for (const { name } of seeded) {
      expect(trpcPart).toContain(`- ${name} (`);
      expect(restPart).toContain(`- ${name} (`);
    }
  });
});
