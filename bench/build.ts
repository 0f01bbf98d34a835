/**
 * The bench measures the servers as production runs them: compiled by tsc with the options of `npm run build`
 * (tsconfig.bench.json extends tsconfig.build.json and adds bench/), started with `node --enable-source-maps` like
 * `npm run start:prod` and the Docker image, into dist/bench/.
 *
 * Not through tsx, the development loader: it compiles with esbuild's `keepNames`, which wraps every named function
 * in a helper that defines its `name` property each time the function is created. A request creates dozens of
 * closures (hooks, middlewares, promise callbacks); the API's code pays that on each, a bare route on few, so under
 * tsx the bench charged the API for a cost that only development has (bench/PROFILE.md, eighth pass).
 *
 * `node --import tsx bench/build.ts` builds (npm run bench:cpu does, then runs the built harness); `bench/run.ts`
 * builds once before it starts its servers (bench/child.ts). Type errors are the typecheck's job (`npm run
 * typecheck`), so this emit skips the check: ~4 s instead of ~14.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILD_DIR = join(ROOT, 'dist', 'bench');

/** Production's Node options (package.json `start:prod`, the Dockerfile's CMD). */
export const PRODUCTION_NODE_OPTIONS = ['--enable-source-maps'];

/** Compiles src/ and bench/ into dist/bench/, replacing what an earlier build left there. */
export async function buildForBench(): Promise<void> {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiler = spawn(process.execPath, [tsc, '-p', 'tsconfig.bench.json', '--noCheck'], { cwd: ROOT, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve, reject) => compiler.once('error', reject).once('exit', resolve));
  if (code !== 0) throw new Error(`compiling the bench's servers failed (tsc exit code ${code})`);
}

/** The built form of a source file of the repository (`bench/api-server.ts` -> `dist/bench/bench/api-server.js`). */
export const builtScript = (source: string) => join(BUILD_DIR, source.replace(/\.ts$/, '.js'));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await buildForBench();
