/**
 * npm run check:cycles: fails (exit 1) when the imports of src/ or bench/ form a cycle, between files or between the
 * domain folders of src/routers. Every import counts, type-only ones and re-exports included: a cycle of types
 * still ties two modules together. Run by CI; no dependency beyond the TypeScript compiler already installed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const TREES = ['src', 'bench'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names (`./x.js` is `./x.ts` on disk), or null for packages and missing files. */
function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? null;
}

/** Strongly connected components with more than one node, or a node importing itself (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indexOf.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indexOf.has(node)) visit(node);
  return found;
}

/** The imports inside one cycle, so the report names the edges to cut. */
const edgesWithin = (graph: Map<string, Set<string>>, component: string[]) =>
  component.flatMap((from) => [...(graph.get(from) ?? [])].filter((to) => component.includes(to)).map((to) => `    ${from} -> ${to}`));

const files = TREES.flatMap((tree) => filesUnder(join(ROOT, tree)));
const fileGraph = new Map<string, Set<string>>();
for (const file of files) {
  const imports = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
  const targets = imports.map((i) => resolveImport(file, i.fileName)).filter((t): t is string => t !== null);
  fileGraph.set(relative(ROOT, file), new Set(targets.map((t) => relative(ROOT, t))));
}

/** src/routers/<domain>/... -> the domain folder; a file directly in src/routers is a node of its own. */
const domainOf = (file: string) => {
  const match = /^src\/routers\/([^/]+)(\/|$)/.exec(file);
  if (!match) return null;
  return match[2] === '/' ? `src/routers/${match[1]}/` : file;
};
const folderGraph = new Map<string, Set<string>>();
for (const [from, targets] of fileGraph) {
  const fromDomain = domainOf(from);
  if (!fromDomain) continue;
  const set = folderGraph.get(fromDomain) ?? new Set<string>();
  for (const to of targets) {
    const toDomain = domainOf(to);
    if (toDomain && toDomain !== fromDomain) set.add(toDomain);
  }
  folderGraph.set(fromDomain, set);
}

const fileCycles = cycles(fileGraph);
const folderCycles = cycles(folderGraph);
for (const component of fileCycles) console.log(`file cycle:\n${edgesWithin(fileGraph, component).join('\n')}`);
for (const component of folderCycles) {
  const why = component.flatMap((from) =>
    [...fileGraph].flatMap(([file, targets]) =>
      domainOf(file) === from
        ? [...targets].filter((t) => component.includes(domainOf(t) ?? '') && domainOf(t) !== from).map((t) => `    ${file} -> ${t}`)
        : [],
    ),
  );
  console.log(`domain folder cycle (${component.join(' <-> ')}):\n${why.join('\n')}`);
}
if (fileCycles.length + folderCycles.length > 0) {
  console.log(`${fileCycles.length} file cycle(s), ${folderCycles.length} domain folder cycle(s)`);
  process.exit(1);
}
console.log(`no import cycles (${files.length} files, ${folderGraph.size} domain folders)`);
