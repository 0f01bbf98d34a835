/**
 * DESIGN 4 for inputs, on every transport: a number is a JSON number or a plain decimal text, anything else a 400
 * naming the field (never `z.coerce.number()`'s 0 for a blank, `null`, `true` or `[]`, nor 16 for `"0x10"`); enum
 * filters take any letter case. The OpenAPI document keeps describing these parameters as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openApiDocument } from '../../src/app.js';
import { numericQueryKeys, restOperations } from '../../src/openapi/plugin.js';
import { lenientEnum } from '../../src/platform/enums.js';
import { decimalInput, zNumeric } from '../../src/platform/numeric.js';
import { appRouter } from '../../src/routers/index.js';
import { newCurator, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

describe('zNumeric', () => {
  const lat = zNumeric(z.number().min(-90).max(90));
  const limit = zNumeric(z.number().int().min(1).max(100), 20);

  it('takes JSON numbers and plain decimal texts', () => {
    for (const [input, value] of [
      [7, 7],
      ['1.5', 1.5],
      ['-2', -2],
      ['+3', 3],
      ['.5', 0.5],
      ['4.', 4],
      ['1e1', 10],
      ['0', 0],
    ] as const)
      expect([input, lat.parse(input)]).toEqual([input, value]);
    expect(limit.parse(undefined)).toBe(20);
  });

  it('refuses blanks, null, booleans, lists, hex, Infinity, NaN and out-of-range values (no 0, no clamping)', () => {
    for (const input of [
      ' ',
      '',
      null,
      true,
      false,
      [],
      {},
      '0x10',
      '0b1',
      '0o7',
      'Infinity',
      '-Infinity',
      '1e309',
      'NaN',
      ' 1',
      '1 ',
      '1_0',
      '1,5',
      '91',
      91,
      undefined,
    ])
      expect([input, lat.safeParse(input).success]).toEqual([input, false]);
    for (const input of ['0', '1.5', '101', 'abc', null]) expect([input, limit.safeParse(input).success]).toEqual([input, false]);
  });

  it('passes non-decimal values through unchanged for the number schema to refuse', () => {
    expect(decimalInput(' ')).toBe(' ');
    expect(decimalInput(null)).toBe(null);
    expect(decimalInput('12')).toBe(12);
  });
});

describe('lenientEnum', () => {
  it('takes any letter case and answers the canonical spelling', () => {
    const status = lenientEnum(['Draft', 'Open', 'Closed']);
    for (const input of ['open', 'OPEN', 'Open', ' oPeN ']) expect(status.parse(input)).toBe('Open');
    expect(status.safeParse('opened').success).toBe(false);
    expect(status.safeParse(1).success).toBe(false);
  });
});

describe('the REST bridge and the OpenAPI document', () => {
  it('still know the numeric query keys (an empty `?lat=` is omitted)', () => {
    const keys = Object.fromEntries(restOperations(appRouter).map((op) => [`${op.method} ${op.path}`, numericQueryKeys(op.procedure)]));
    expect(keys['GET /api/v1/events/nearby']).toEqual(['lat', 'lng', 'radiusKm', 'limit']);
    expect(keys['GET /api/v1/territories/nearby']).toEqual(['lat', 'lng', 'radiusKm', 'limit']);
    expect(keys['GET /api/v2/journeys/onboarding/suggested-territories']).toEqual(['latitude', 'longitude', 'radiusKm', 'limit']);
    expect(keys['GET /api/v1/chat/conversations/{conversationId}/messages']).toContain('limit');
    expect(keys['GET /api/v1/reports/paged']).toEqual(expect.arrayContaining(['pageNumber', 'pageSize']));
  });

  it('describes the numbers with their type, bounds, default and whether they are required', () => {
    type Parameter = { name: string; required?: boolean; schema: unknown };
    const doc = openApiDocument() as unknown as { paths: Record<string, { get: { parameters: Parameter[] } }> };
    const parametersOf = (path: string) => doc.paths[path]?.get.parameters ?? [];
    const params: Record<string, Parameter | undefined> = Object.fromEntries(parametersOf('/api/v1/events/nearby').map((p) => [p.name, p]));
    expect(params.lat).toEqual({ in: 'query', name: 'lat', required: true, schema: { type: 'number', minimum: -90, maximum: 90 } });
    expect(params.radiusKm).toMatchObject({ schema: { type: 'number', exclusiveMinimum: 0, maximum: 500, default: 5 } });
    expect(params.radiusKm?.required).toBeUndefined();
    expect(params.limit).toMatchObject({ schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } });
    const votings = parametersOf('/api/v1/territories/{territoryId}/votings').find((p) => p.name === 'status');
    expect(votings?.schema).toEqual({ type: 'string', enum: ['Draft', 'Open', 'Closed', 'Approved', 'Rejected'] });
  });
});

describe('over HTTP', () => {
  let t: TestApp;
  let T: TestTerritory;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ JOBS__ENABLED: 'false' });
    T = await newTerritory(t);
    user = await newUser(t);
  });
  afterAll(() => t.close());

  const get = (url: string, who: TestUser = user) => t.app.inject({ method: 'GET', url, headers: who.headers });

  it('a number that is not a plain decimal is a 400 naming its field on REST', async () => {
    const refused: [string, string][] = [
      ['/api/v1/events/nearby?lat=%20&lng=%20', 'lat'],
      ['/api/v1/events/nearby?lat=0x10&lng=1', 'lat'],
      ['/api/v1/events/nearby?lat=1&lng=1&radiusKm=Infinity', 'radiusKm'],
      ['/api/v1/events/nearby?lat=1&lng=1&radiusKm=1e309', 'radiusKm'],
      ['/api/v1/events/nearby/paged?lat=1&lng=1&pageSize=%20', 'pageSize'],
      ['/api/v1/territories/nearby?lat=%20&lng=%20', 'lat'],
      ['/api/v1/territories/nearby?lat=1&lng=NaN', 'lng'],
      ['/api/v1/territories?skip=%20', 'skip'],
      ['/api/v1/territories?take=0x10', 'take'],
    ];
    for (const [url, field] of refused) {
      const res = await get(url);
      expect([url, res.statusCode]).toEqual([url, 400]);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.arrayContaining([expect.objectContaining({ field })]) });
    }
    for (const url of ['/api/v1/events/nearby?lat=-23.5&lng=%2B46.6&radiusKm=1e1', '/api/v1/territories/nearby?lat=.5&lng=1.&limit=05'])
      expect([url, (await get(url)).statusCode]).toEqual([url, 200]);
  });

  it('null, booleans, blanks and lists are 400s on tRPC', async () => {
    for (const bad of [null, true, '', ' ', [], '0x10']) {
      for (const path of ['events.nearby', 'territories.nearby']) {
        const input = encodeURIComponent(JSON.stringify({ lat: bad, lng: 1 }));
        const res = await get(`/trpc/${path}?input=${input}`);
        expect([path, bad, res.statusCode]).toEqual([path, bad, 400]);
      }
    }
    const ok = await get(`/trpc/events.nearby?input=${encodeURIComponent(JSON.stringify({ lat: '10', lng: 20 }))}`);
    expect(ok.statusCode).toBe(200);
  });

  it('list filters take any letter case, as natural-assets, items and assets do', async () => {
    const curator = await newCurator(t, T);
    for (const url of [
      `/api/v1/territories/${T.id}/natural-assets?status=pending`,
      `/api/v1/assets?territoryId=${T.id}&status=active`,
      `/api/v1/join-requests/incoming?status=pending`,
      `/api/v1/join-requests/incoming?status=Approved`,
      `/api/v1/territories/${T.id}/votings?status=open`,
      `/api/v1/territories/${T.id}/votings?status=OPEN`,
      `/api/v1/territories/${T.id}/votings?status=Open`,
      `/api/v1/reports?territoryId=${T.id}&status=open&targetType=post`,
      `/api/v1/reports/paged?territoryId=${T.id}&status=Dismissed&targetType=User`,
      `/api/v1/territories/${T.id}/work-items?status=pending&type=moderation_case`,
      `/api/v1/territories/${T.id}/work-items/paged?status=Completed&type=Moderation_Case`,
    ]) {
      const res = await get(url, curator);
      expect([url, res.statusCode, res.body.slice(0, 200)]).toEqual([url, 200, expect.any(String)]);
    }
    const res = await get(`/api/v1/territories/${T.id}/votings?status=opened`, curator);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.arrayContaining([expect.objectContaining({ field: 'status' })]) });
  });
});
