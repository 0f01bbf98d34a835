/**
 * A client application of the journeys API (v2) through the SDK's typed REST client: it obtains a client token with
 * OAuth 2.0 client credentials (`POST /oauth/token`), then renders two screens with one call each: the territories
 * near a point (a client-level journey) and the feed of the nearest one as seen by a user (`X-User-Token`).
 *
 *   API_URL=http://localhost:3000 npx node --conditions=source --import tsx client-sdk/examples/journeys-rest.ts
 *
 * (from the repository root; `npx node` is the project's Node 24). In a project that installed the SDK:
 * `API_URL=... node journeys-rest.ts`.
 *
 * Without settings it registers a client application as the demo admin (an administrator registers clients and
 * sees their secret once) and acts for the demo visitor near Vila Madalena. Optional: `CLIENT_ID` and
 * `CLIENT_SECRET` (a registered client, instead of registering one), `USER_TOKEN` (the user's access token, instead
 * of logging in the demo visitor), `LATITUDE` and `LONGITUDE` (the point, default Vila Madalena).
 */
import { createRestClient, type components } from '@territory-platform/client-sdk/rest';

type FeedItem = components['schemas']['FeedItemJourney'];

const apiUrl = (process.env.API_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const latitude = Number(process.env.LATITUDE ?? -23.5535);
const longitude = Number(process.env.LONGITUDE ?? -46.6915);

/** Calls without a token: the demo logins and the token endpoint. */
const anonymous = createRestClient({ baseUrl: apiUrl });

/** A demo user's access token (the demo provider is accepted outside production). */
async function demoLogin(externalId: 'admin' | 'visitor'): Promise<string> {
  const { data, error, response } = await anonymous.POST('/api/v1/auth/social', {
    body: { authProvider: 'demo', externalId, displayName: `Demo ${externalId}` },
  });
  if (error) throw new Error(`login of demo:${externalId} failed: ${response.status} ${error.detail}`);
  if (!('token' in data)) throw new Error(`demo:${externalId} needs a two-factor code`);
  return data.token;
}

/** The client's id and secret: from the environment, or a new registration by the demo admin. */
async function clientCredentials(): Promise<{ clientId: string; clientSecret: string }> {
  if (process.env.CLIENT_ID && process.env.CLIENT_SECRET) return { clientId: process.env.CLIENT_ID, clientSecret: process.env.CLIENT_SECRET };
  const admin = createRestClient({ baseUrl: apiUrl, token: await demoLogin('admin') });
  const { data, error, response } = await admin.POST('/api/v1/admin/clients', {
    body: { name: 'journeys-rest example', scopes: ['journeys:read', 'journeys:write'] },
  });
  if (error) throw new Error(`client registration failed: ${response.status} ${error.detail}`);
  console.log(`registered client ${data.clientId} (${data.scopes.join(' ')})`);
  return data;
}

/** RFC 6749 client credentials: a form body (HTTP Basic works as well); `scope` narrows what the token holds. */
async function clientToken(): Promise<string> {
  const { clientId, clientSecret } = await clientCredentials();
  const { data, error, response } = await anonymous.POST('/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'journeys:read' },
    // openapi-fetch serializes the body as a form when the content type says so.
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  // The token endpoint answers RFC 6749 errors ({error, error_description}).
  if (error) throw new Error(`token request failed: ${response.status} ${JSON.stringify(error)}`);
  console.log(`client token: ${data.token_type}, scope "${data.scope}", expires in ${data.expires_in} s`);
  return data.access_token;
}

const line = (item: FeedItem) =>
  `- ${item.post.title} by ${item.author.displayName}: ${item.counts.likes} likes, ${item.counts.comments} comments, ${item.media.length} media`;

async function main() {
  const token = await clientToken();
  const userToken = process.env.USER_TOKEN ?? (await demoLogin('visitor'));
  // Every call carries the client token; the journeys that act for a user also carry their token.
  const v2 = createRestClient({ baseUrl: apiUrl, token });

  // Onboarding screen: no user needed.
  const nearby = await v2.GET('/api/v2/journeys/onboarding/suggested-territories', {
    params: { query: { latitude, longitude, radiusKm: 10, limit: 3 } },
  });
  if (nearby.error) throw new Error(`suggested territories: ${nearby.response.status} ${nearby.error.code} ${nearby.error.error}`);
  console.log(`near ${latitude}, ${longitude}: ${nearby.data.territories.map((t) => `${t.name} (${t.distanceKm} km)`).join(', ')}`);
  const [territory] = nearby.data.territories;
  if (!territory) throw new Error('no territory near that point');

  // Feed screen: posts with counts, media, author and the user's own interactions, in one call (cached 60 s).
  const feed = await v2.GET('/api/v2/journeys/feed/territory-feed', {
    params: { query: { territoryId: territory.id, pageSize: 10 } },
    headers: { 'X-User-Token': userToken },
  });
  if (feed.error) throw new Error(`territory feed: ${feed.response.status} ${feed.error.code} ${feed.error.error}`);
  const { items, pagination } = feed.data;
  console.log(`feed of ${territory.name} (X-Cache: ${feed.response.headers.get('x-cache')}), posts: ${pagination.totalCount}`);
  for (const item of items) console.log(line(item));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
