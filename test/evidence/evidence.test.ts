import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { multipartBody, TINY_PDF, TINY_PNG } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const downloadUrl = (id: string) => `/api/v1/admin/evidences/${id}/download`;

async function uploadedEvidence(bytes: Buffer, fileName: string) {
  const user = await newUser(t);
  const body = multipartBody([{ field: 'file', fileName, bytes }]);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/verification/identity/document/upload',
    payload: body.payload,
    headers: { ...body.headers, ...user.headers },
  });
  expect(res.statusCode).toBe(201);
  return { user, evidenceId: res.json().evidenceId as string };
}

describe('GET /api/v1/admin/evidences/{evidenceId}/download', () => {
  it('streams the stored bytes with their type, length and an attachment disposition', async () => {
    const { evidenceId } = await uploadedEvidence(TINY_PNG, 'my "id".png');
    const res = await t.app.inject({ method: 'GET', url: downloadUrl(evidenceId), headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-length']).toBe(String(TINY_PNG.length));
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${evidenceId}.png"`);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.rawPayload.equals(TINY_PNG)).toBe(true);
    expect(await countRows(t, 'audit_entry', "action = 'evidence.downloaded' and subject_id = $1", [evidenceId])).toBe(1);

    const pdf = await uploadedEvidence(TINY_PDF, 'scan.pdf');
    const pdfRes = await t.app.inject({ method: 'GET', url: downloadUrl(pdf.evidenceId), headers: admin.headers });
    expect(pdfRes.headers['content-type']).toBe('application/pdf');
    expect(pdfRes.rawPayload.equals(TINY_PDF)).toBe(true);
  });

  it('is 404 for an unknown evidence and for a file missing from storage', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: downloadUrl(UNKNOWN_ID), headers: admin.headers });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toContain('application/problem+json');
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND', instance: downloadUrl(UNKNOWN_ID) });

    const { evidenceId } = await uploadedEvidence(TINY_PNG, 'a.png');
    const [row] = await t.sql<{ storage_key: string }>('select storage_key from evidence where id = $1', [evidenceId]);
    await t.deps.storage.remove(row!.storage_key);
    const gone = await t.app.inject({ method: 'GET', url: downloadUrl(evidenceId), headers: admin.headers });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('is 400 for a malformed id', async () => {
    const res = await t.app.inject({ method: 'GET', url: downloadUrl('not-a-uuid'), headers: admin.headers });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'evidenceId' }] });
  });

  it('is 401 without a token and 403 for anyone but a SYSTEM_ADMIN (the owner included)', async () => {
    const { user, evidenceId } = await uploadedEvidence(TINY_PNG, 'a.png');
    const anonymous = await t.app.inject({ method: 'GET', url: downloadUrl(evidenceId) });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    const badToken = await t.app.inject({ method: 'GET', url: downloadUrl(evidenceId), headers: { authorization: 'Bearer nope' } });
    expect(badToken.statusCode).toBe(401);
    const owner = await t.app.inject({ method: 'GET', url: downloadUrl(evidenceId), headers: user.headers });
    expect(owner.statusCode).toBe(403);
    expect(owner.json()).toMatchObject({ code: 'FORBIDDEN' });
    expect(await countRows(t, 'audit_entry', "action = 'evidence.downloaded' and subject_id = $1", [evidenceId])).toBe(0);
  });
});
