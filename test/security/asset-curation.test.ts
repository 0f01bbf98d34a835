import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newCurator, newResident, newTerritory, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
let creator: TestUser;
let curator: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t);
  creator = await newResident(t, territory, { verified: true });
  curator = await newCurator(t, territory);
});
afterAll(() => t.close());

const call = (method: 'POST' | 'PATCH', url: string, user: TestUser, payload: Record<string, unknown>) =>
  t.app.inject({ method, url, headers: user.headers, payload });

/** An asset its territory's curators approved: Active. */
async function activeAsset(): Promise<string> {
  const created = await call('POST', '/api/v1/assets', creator, {
    territoryId: territory.id,
    type: 'natural',
    subtype: 'river',
    name: 'Rio Verde',
    geoAnchors: [{ latitude: -23.54, longitude: -46.64 }],
  });
  expect(created.statusCode).toBe(201);
  const id = created.json().id as string;
  expect((await call('POST', `/api/v1/assets/${id}/curate`, curator, { outcome: 'APPROVED' })).json()).toMatchObject({ status: 'Active' });
  return id;
}

const pendingCurations = (id: string) => countRows(t, 'work_item', "type = 'ASSET_CURATION' and subject_id = $1 and status = 'PENDING'", [id]);

describe('an approved asset cannot be rewritten by its creator and stay approved (finding 9)', () => {
  it("the creator's change sends it back to Suggested, with a new curation for the curators", async () => {
    const id = await activeAsset();
    const res = await call('PATCH', `/api/v1/assets/${id}`, creator, { name: 'Casino Verde' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Casino Verde', status: 'Suggested' });
    expect(await pendingCurations(id)).toBe(1);
    expect(await countRows(t, 'audit_entry', "subject_id = $1 and action = 'asset.sent_back_to_curation'", [id])).toBe(1);
    // The curators approve it again through the queue, as any suggestion.
    expect((await call('POST', `/api/v1/assets/${id}/curate`, curator, { outcome: 'APPROVED' })).json()).toMatchObject({ status: 'Active' });
  });

  it("a curator's own edit stands, and an edit that changes nothing changes nothing", async () => {
    const id = await activeAsset();
    expect((await call('PATCH', `/api/v1/assets/${id}`, curator, { name: 'Rio Verde Claro' })).json()).toMatchObject({ status: 'Active' });
    expect((await call('PATCH', `/api/v1/assets/${id}`, creator, { name: 'Rio Verde Claro' })).json()).toMatchObject({ status: 'Active' });
    expect(await pendingCurations(id)).toBe(0);
  });
});
