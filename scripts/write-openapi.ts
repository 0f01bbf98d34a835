/**
 * Writes the OpenAPI document of the API to client-sdk/openapi.json and the REST client's types generated from it
 * (openapi-typescript) to client-sdk/src/rest-types.ts. No server or database is needed: the document is built
 * from the routers' zod schemas.
 *
 *   npm run openapi           regenerate both files
 *   npm run openapi:check     exit 1 when either committed file differs from what the code generates (CI)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { openApiDocument } from '../src/app.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCUMENT_FILE = fileURLToPath(new URL('../client-sdk/openapi.json', import.meta.url));
const TYPES_FILE = fileURLToPath(new URL('../client-sdk/src/rest-types.ts', import.meta.url));

/** Both generated files as text, exactly as they are committed. */
async function generateFiles(): Promise<{ document: string; types: string }> {
  const document = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
  // Same options as the CLI (`npm run generate -w client-sdk`), so both ways give the same file. The parsed copy
  // keeps the bundler from touching the cached document object.
  const ast = await openapiTS(JSON.parse(document), { silent: true });
  const types = `${COMMENT_HEADER}${astToString(ast)}`;
  return { document, types };
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function main() {
  const check = process.argv.includes('--check');
  let generated: Awaited<ReturnType<typeof generateFiles>>;
  try {
    generated = await generateFiles();
  } catch (error) {
    // Usually a procedure whose input the REST bridge cannot express (the message names it).
    console.error(`Could not generate the OpenAPI document: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  const files = [
    { file: DOCUMENT_FILE, text: generated.document },
    { file: TYPES_FILE, text: generated.types },
  ];

  if (check) {
    const stale = files.filter(({ file, text }) => readOrEmpty(file) !== text).map(({ file }) => relative(ROOT, file));
    if (stale.length > 0) {
      console.error(`OpenAPI output is stale: ${stale.join(', ')} differ from what the code generates.`);
      console.error('Run `npm run openapi` and commit the result.');
      process.exit(1);
    }
    console.log('OpenAPI document and REST client types are up to date.');
    return;
  }

  for (const { file, text } of files) {
    writeFileSync(file, text);
    console.log(`wrote ${relative(ROOT, file)}`);
  }
}

await main();
