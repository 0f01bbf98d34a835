import pkg from '../../package.json' with { type: 'json' };

/**
 * The API version: the `version` of the root package.json, in one place. The OpenAPI document, `GET /health` and
 * the client SDK (whose package version must equal it: client-sdk/scripts/build.ts checks) all report this value.
 * Importing the JSON (rather than reading it from disk) makes `npm run build` copy package.json to dist/, so the
 * compiled server finds it at the same relative path.
 */
export const API_VERSION: string = pkg.version;
