/**
 * Builds the publishable SDK into client-sdk/dist (`npm run build -w client-sdk`; `npm pack` and `npm publish` run it
 * through `prepack`):
 *
 * - dist/index.js, dist/rest.js: ESM JavaScript (esbuild; the dependencies stay imports).
 * - dist/index.d.ts, dist/rest.d.ts: one declaration file per entry carrying the whole `AppRouter` type.
 *   1. The TypeScript compiler emits, on demand, the declarations of the SDK's entries and of the server modules
 *      their types reach. That emit already spells every procedure's input and output out as plain structural types
 *      (no zod schemas, no entity classes).
 *   2. The server-only types the router type still names are replaced by `object`: the call context (ORM, Fastify,
 *      jobs...) and the procedure meta (OpenAPI settings). A client reads neither.
 *   3. rollup-plugin-dts inlines those declarations into the entry's file.
 *   4. The result may import only the packages the SDK depends on (EXTERNAL_TYPES); anything else fails the build,
 *      since a consumer would not have it installed.
 *
 * The SDK's version is the API's: the root package.json's `version` (src/platform/version.ts). The build refuses to
 * run when client-sdk/package.json says otherwise; `npm version <v> --workspaces --include-workspace-root` bumps both.
 */
import { build as esbuild } from 'esbuild';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rollup, type Plugin } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import ts from 'typescript';

const SDK = fileURLToPath(new URL('..', import.meta.url));
const ROOT = join(SDK, '..');
/** `--out-dir <dir>`: build elsewhere (the package test builds into a staging copy, so concurrent runs never share dist/). */
const outDirArg = process.argv.indexOf('--out-dir');
const DIST = outDirArg > 0 && process.argv[outDirArg + 1] ? resolve(process.argv[outDirArg + 1] as string) : join(SDK, 'dist');
const ENTRIES = ['index', 'rest'] as const;

/** Packages the bundled declarations may import: the SDK's dependencies and its peer dependency. */
const EXTERNAL_TYPES = new Set(['@trpc/client', '@trpc/server', '@trpc/server/unstable-core-do-not-import', 'openapi-fetch']);

/** Server modules whose types must not reach the client, with what replaces them (src/trpc/init.ts, context.ts). */
const SERVER_ONLY = {
  'src/trpc/context.d.ts': "/** Server-only: a procedure's call context is never visible to a client. */\nexport type Context = object;\n",
  'src/trpc/init.d.ts': '/** Server-only: the procedure meta (OpenAPI settings, rate-limit bucket). */\nexport type AppMeta = object;\n',
};

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { version: string };
const started = Date.now();
const step = (message: string) => console.log(`[client-sdk build ${((Date.now() - started) / 1000).toFixed(1)} s] ${message}`);

function checkVersion() {
  const api = readJson(join(ROOT, 'package.json')).version;
  const sdk = readJson(join(SDK, 'package.json')).version;
  if (api !== sdk) {
    throw new Error(
      `client-sdk/package.json version ${sdk} differs from the API version ${api} (package.json): ` +
        `run \`npm version ${api} --no-git-tag-version -w client-sdk\`, or bump both with \`npm version <v> --workspaces --include-workspace-root\`.`,
    );
  }
  return api;
}

async function buildJavaScript() {
  await esbuild({
    absWorkingDir: SDK,
    entryPoints: ENTRIES.map((entry) => `src/${entry}.ts`),
    outdir: DIST,
    bundle: true,
    // @trpc/client, openapi-fetch: installed beside the SDK, never copied into it.
    packages: 'external',
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    logLevel: 'warning',
  });
}

/**
 * Steps 1 to 3 as one rollup plugin: each declaration file the bundle asks for is emitted by the compiler on demand
 * (only the modules the entry's types reach, not the whole server), the server-only ones are replaced.
 */
function declarationsOnDemand(): Plugin {
  const configFile = join(ROOT, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(configFile, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!parsed) throw new Error(`cannot read ${configFile}`);
  const program = ts.createProgram(
    ENTRIES.map((entry) => join(SDK, 'src', `${entry}.ts`)),
    // `npm run typecheck` checks the code; declaration emit still reports what it cannot write out.
    { ...parsed.options, noEmit: false, declaration: true, emitDeclarationOnly: true, noCheck: true, rootDir: ROOT, incremental: false },
  );
  const sourceOf = (declaration: string) => {
    const base = declaration.replace(/\.d\.ts$/, '');
    return program.getSourceFile(`${base}.ts`) ?? program.getSourceFile(`${base}.tsx`);
  };
  return {
    name: 'declarations-on-demand',
    // The emitted files name their imports `./x.js`: the declaration of `./x.ts` (or `./x/index.ts`).
    resolveId(source, importer) {
      if (isAbsolute(source) && source.endsWith('.d.ts')) return source;
      if (!importer || !source.startsWith('.')) return null;
      const base = join(dirname(importer), source).replace(/\.js$/, '');
      const found = [`${base}.d.ts`, join(base, 'index.d.ts')].find((candidate) => sourceOf(candidate));
      if (!found) throw new Error(`${relative(ROOT, importer)} imports ${source}, which is not part of the program`);
      return found;
    },
    load(id) {
      const stub = SERVER_ONLY[relative(ROOT, id) as keyof typeof SERVER_ONLY];
      if (stub) return stub;
      const sourceFile = sourceOf(id);
      if (!sourceFile) return null;
      let text: string | undefined;
      const { diagnostics } = program.emit(sourceFile, (_name, data) => (text = data), undefined, true);
      const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
      if (errors.length > 0 || text === undefined) {
        const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
        throw new Error(`declaration emit failed for ${relative(ROOT, sourceFile.fileName)}:\n${ts.formatDiagnostics(errors, host)}`);
      }
      return text;
    },
  };
}

/** Step 4: one declaration file per entry, importing only EXTERNAL_TYPES. */
async function bundleDeclarations() {
  const plugin = declarationsOnDemand();
  step('program loaded');
  for (const entry of ENTRIES) {
    const bundle = await rollup({
      input: join(SDK, 'src', `${entry}.d.ts`),
      plugins: [plugin, dts()],
      // Packages stay imports (checked below).
      external: (id) => !id.startsWith('.') && !isAbsolute(id),
      onwarn: (warning) => {
        throw new Error(`declaration bundle of ${entry}: ${warning.message}`);
      },
    });
    const file = join(DIST, `${entry}.d.ts`);
    await bundle.write({ file, format: 'es' });
    await bundle.close();

    const code = readFileSync(file, 'utf8');
    const imported = new Set([...code.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1] as string));
    const foreign = [...imported].filter((specifier) => !EXTERNAL_TYPES.has(specifier));
    if (foreign.length > 0) {
      throw new Error(
        `${relative(SDK, file)} imports ${foreign.join(', ')}: a consumer of the SDK would not have ${foreign.length > 1 ? 'them' : 'it'}. ` +
          'Keep server types out of procedure inputs and outputs (zod schemas only), or add the package to the SDK.',
      );
    }
    step(`${relative(ROOT, file)} written`);
  }
}

const version = checkVersion();
rmSync(DIST, { recursive: true, force: true });
mkdirSync(DIST, { recursive: true });
await buildJavaScript();
step('JavaScript written');

await bundleDeclarations();
step(`built @territory-platform/client-sdk ${version} into ${relative(ROOT, DIST)}/`);
