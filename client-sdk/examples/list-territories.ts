/**
 * Logs in as the demo visitor and lists the active territories twice: through the typed tRPC client and through
 * the REST client generated from the OpenAPI document.
 *
 *   API_URL=http://localhost:3000 node --conditions=source --import tsx client-sdk/examples/list-territories.ts
 *
 * (from the repository root). In a project that installed the SDK: `API_URL=... node list-territories.ts`.
 */
import { createTerritoryClient } from '@territory-platform/client-sdk';
import { createRestClient } from '@territory-platform/client-sdk/rest';

const apiUrl = (process.env.API_URL ?? 'http://localhost:3000').replace(/\/+$/, '');

/** The demo provider is accepted outside production (see the API's startup banner). */
async function loginAsDemoVisitor() {
  const anonymous = createRestClient({ baseUrl: apiUrl });
  const { data, error, response } = await anonymous.POST('/api/v1/auth/social', {
    body: { authProvider: 'demo', externalId: 'visitor', displayName: 'Demo Visitor' },
  });
  if (error) throw new Error(`login failed: ${response.status} ${error.detail}`);
  // Accounts with two-factor authentication answer a challenge instead (POST /api/v1/auth/2fa/verify); the demo
  // visitor has none.
  if (!('token' in data)) throw new Error('login needs a two-factor code');
  return data;
}

const describe = (t: { name: string; city: string; state: string; latitude: number; longitude: number }) =>
  `  - ${t.name} (${t.city}, ${t.state}) at ${t.latitude.toFixed(4)}, ${t.longitude.toFixed(4)}`;

async function main() {
  const login = await loginAsDemoVisitor();
  console.log(`logged in as ${login.user.displayName} (${login.user.id}); token valid ${login.expiresInSeconds} s`);

  const client = createTerritoryClient({ url: apiUrl, token: login.token });
  const viaTrpc = await client.territories.list.query({});
  console.log(`tRPC territories.list: ${viaTrpc.length} territories`);
  for (const territory of viaTrpc) console.log(describe(territory));

  const rest = createRestClient({ baseUrl: apiUrl, token: login.token });
  const { data: viaRest, error } = await rest.GET('/api/v1/territories', { params: { query: { take: 100 } } });
  if (error) throw new Error(`GET /api/v1/territories failed: ${error.status} ${error.detail}`);
  console.log(`REST GET /api/v1/territories: ${viaRest.length} territories`);
  for (const territory of viaRest) console.log(describe(territory));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
