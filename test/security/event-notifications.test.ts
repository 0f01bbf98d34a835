import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newResident, newTerritory, newVisitor } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("one creator cannot flood a territory's residents with event notifications (finding 14)", () => {
  it('a new visitor creating 8 events: all are created, the first 3 of the day notify the residents', async () => {
    const territory = await newTerritory(t);
    await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    const startsAtUtc = new Date(Date.now() + 86_400_000).toISOString();
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/events',
          headers: visitor.headers,
          payload: { territoryId: territory.id, title: `Free money ${i}`, startsAtUtc, latitude: -23.55, longitude: -46.63 },
        }),
      ),
    );
    expect(created.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(await countRows(t, 'event', 'territory_id = $1', [territory.id])).toBe(8);
    expect(await countRows(t, 'outbox_message', "type = 'EVENT_CREATED' and data->>'territoryId' = $1", [territory.id])).toBe(3);
  });

  it('the limit is a system setting', async () => {
    await t.sql(
      `insert into system_config (key, value, category, created_at_utc, updated_at_utc) values ('Events:NotifyingCreationsPerDay', '1', 'Events', now(), now())
       on conflict (key) do update set value = excluded.value`,
    );
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    await newResident(t, territory);
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/events',
        headers: resident.headers,
        payload: {
          territoryId: territory.id,
          title: `Meeting ${i}`,
          startsAtUtc: new Date(Date.now() + 86_400_000).toISOString(),
          latitude: -23.55,
          longitude: -46.63,
        },
      });
      expect(res.statusCode).toBe(201);
    }
    expect(await countRows(t, 'outbox_message', "type = 'EVENT_CREATED' and data->>'territoryId' = $1", [territory.id])).toBe(1);
  });
});
