/**
 * What the SDK's types catch at compile time. Not meant to run: CI type-checks it with `tsc --strict` in a project
 * that installed the packed SDK (client-sdk/test/package.test.ts), where each `@ts-expect-error` must meet its error
 * (an unneeded one fails the compilation too).
 */
import { createTerritoryClient, type RouterInputs, type RouterOutputs } from '@territory-platform/client-sdk';
import { createRestClient, type Problem } from '@territory-platform/client-sdk/rest';

export async function typedCalls(url: string, token: string) {
  const client = createTerritoryClient({ url, token });
  const rest = createRestClient({ baseUrl: url, token });

  // Inputs and outputs are the server's own types.
  const query: RouterInputs['territories']['list'] = { take: 10 };
  const territories: RouterOutputs['territories']['list'] = await client.territories.list.query(query);
  const first = territories[0];
  const name: string | undefined = first?.name;
  const territory = await client.territories.byId.query({ id: first?.id ?? '' });
  const radius: number = territory.radiusKm;

  // @ts-expect-error: there is no procedure `territories.byName`.
  await client.territories.byName.query({ name: 'Vila Madalena' });
  // @ts-expect-error: `id` is a string (a UUID), not a number.
  await client.territories.byId.query({ id: 42 });
  // @ts-expect-error: `id` is required.
  await client.territories.byId.query({});
  // @ts-expect-error: a query is not a mutation.
  await client.territories.byId.mutate({ id: territory.id });
  // @ts-expect-error: the output has no `owner`.
  const _owner = territory.owner;

  // The REST client checks paths, parameters and bodies against the OpenAPI document.
  const { data, error } = await rest.GET('/api/v1/territories/{id}', { params: { path: { id: territory.id } } });
  const problem: Problem | undefined = error;
  // @ts-expect-error: no such path.
  await rest.GET('/api/v1/territory/{id}', { params: { path: { id: territory.id } } });
  // @ts-expect-error: the path parameter `id` is missing.
  await rest.GET('/api/v1/territories/{id}', { params: { path: {} } });

  return { name, radius, restName: data?.name, problem };
}
