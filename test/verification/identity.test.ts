import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { multipartBody, pngOfSize, TINY_JPEG, TINY_PDF, TINY_PNG } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const UPLOAD = '/api/v1/verification/identity/document/upload';
const decideUrl = (id: string) => `/api/v1/admin/verifications/identity/${id}/decide`;

function upload(user: TestUser | null, bytes: Buffer, opts: { fileName?: string; contentType?: string; field?: string } = {}) {
  const body = multipartBody([{ field: opts.field ?? 'file', fileName: opts.fileName ?? 'document.png', contentType: opts.contentType, bytes }]);
  return t.app.inject({ method: 'POST', url: UPLOAD, payload: body.payload, headers: { ...body.headers, ...(user?.headers ?? {}) } });
}

async function identityStatus(userId: string) {
  const [row] = await t.sql<{ s: string }>('select identity_verification_status as s from app_user where id = $1', [userId]);
  return row?.s;
}

const evidenceFiles = (userId: string) => {
  try {
    return readdirSync(join(t.deps.config.dataDir, 'files', 'evidence', userId));
  } catch {
    return [];
  }
};

async function nothingWrittenFor(user: TestUser) {
  expect(await countRows(t, 'evidence', 'user_id = $1', [user.id])).toBe(0);
  expect(await countRows(t, 'work_item', 'subject_id = $1', [user.id])).toBe(0);
  expect(await identityStatus(user.id)).toBe('Unverified');
  expect(evidenceFiles(user.id)).toEqual([]);
}

describe('POST /api/v1/verification/identity/document/upload', () => {
  it('stores a PNG, opens an IDENTITY_VERIFICATION work item and makes the user Pending (201)', async () => {
    const user = await newUser(t);
    const res = await upload(user, TINY_PNG);
    expect(res.statusCode).toBe(201);
    const body = res.json() as { evidenceId: string; workItemId: string; status: string };
    expect(body).toEqual({ evidenceId: expect.any(String), workItemId: expect.any(String), status: 'Pending' });

    expect(await identityStatus(user.id)).toBe('Pending');
    const [evidence] = await t.sql<{ kind: string; mime_type: string; size_bytes: number; storage_key: string; original_file_name: string }>(
      'select kind, mime_type, size_bytes, storage_key, original_file_name from evidence where id = $1',
      [body.evidenceId],
    );
    expect(evidence).toMatchObject({
      kind: 'IDENTITY_DOCUMENT',
      mime_type: 'image/png',
      size_bytes: TINY_PNG.length,
      storage_key: `evidence/${user.id}/${body.evidenceId}.png`,
      original_file_name: 'document.png',
    });
    const [item] = await t.sql<Record<string, unknown>>('select * from work_item where id = $1', [body.workItemId]);
    expect(item).toMatchObject({
      type: 'IDENTITY_VERIFICATION',
      status: 'PENDING',
      subject_type: 'User',
      subject_id: user.id,
      required_permission: 'SYSTEM_ADMIN',
      payload: { evidenceId: body.evidenceId },
    });
    const stored = await t.deps.storage.open(evidence!.storage_key);
    expect(stored?.sizeBytes).toBe(TINY_PNG.length);
    // The cached user is dropped at once: /users/me already says Pending.
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: user.headers });
    expect(me.json()).toMatchObject({ identityVerificationStatus: 'Pending' });
  });

  it('sniffs JPEG and PDF from the bytes, whatever the client claims', async () => {
    const a = await newUser(t);
    const jpeg = await upload(a, TINY_JPEG, { fileName: 'photo.txt', contentType: 'text/plain' });
    expect(jpeg.statusCode).toBe(201);
    const [j] = await t.sql<{ mime_type: string; storage_key: string }>('select mime_type, storage_key from evidence where id = $1', [jpeg.json().evidenceId]);
    expect(j).toMatchObject({ mime_type: 'image/jpeg', storage_key: expect.stringMatching(/\.jpg$/) });

    const b = await newUser(t);
    const pdf = await upload(b, TINY_PDF, { fileName: 'scan.pdf', contentType: 'image/png' });
    expect(pdf.statusCode).toBe(201);
    const [p] = await t.sql<{ mime_type: string }>('select mime_type from evidence where id = $1', [pdf.json().evidenceId]);
    expect(p?.mime_type).toBe('application/pdf');
  });

  it('refuses a text file renamed .png (400), writing nothing', async () => {
    const user = await newUser(t);
    const res = await upload(user, Buffer.from('just some text, not an image\n'), { fileName: 'fake.png', contentType: 'image/png' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 400, code: 'UNSUPPORTED_FILE_TYPE' });
    await nothingWrittenFor(user);
  });

  it('refuses a type outside JPEG, PNG and PDF even when recognised (GIF)', async () => {
    const user = await newUser(t);
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    const res = await upload(user, gif, { fileName: 'a.gif' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE' });
    await nothingWrittenFor(user);
  });

  it('accepts exactly 5 MB and refuses 5 MB + 1 byte (400), writing nothing', async () => {
    const big = await newUser(t);
    const tooBig = await upload(big, pngOfSize(5 * 1024 * 1024 + 1));
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.json()).toMatchObject({ code: 'FILE_TOO_LARGE' });
    await nothingWrittenFor(big);

    const fits = await newUser(t);
    const ok = await upload(fits, pngOfSize(5 * 1024 * 1024));
    expect(ok.statusCode).toBe(201);
  });

  it('is 400 without a file, with the file in another field, or without multipart', async () => {
    const user = await newUser(t);
    const noFile = multipartBody([], { note: 'hello' });
    const a = await t.app.inject({ method: 'POST', url: UPLOAD, payload: noFile.payload, headers: { ...noFile.headers, ...user.headers } });
    expect(a.statusCode).toBe(400);
    expect(a.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'file' }] });

    const wrongField = await upload(user, TINY_PNG, { field: 'document' });
    expect(wrongField.statusCode).toBe(400);

    const twoFiles = multipartBody([
      { field: 'file', fileName: 'a.png', bytes: TINY_PNG },
      { field: 'file', fileName: 'b.png', bytes: TINY_PNG },
    ]);
    const two = await t.app.inject({ method: 'POST', url: UPLOAD, payload: twoFiles.payload, headers: { ...twoFiles.headers, ...user.headers } });
    expect(two.statusCode).toBe(400);
    expect(two.json()).toMatchObject({ code: 'TOO_MANY_FILES' });

    const json = await t.app.inject({ method: 'POST', url: UPLOAD, payload: { file: 'x' }, headers: user.headers });
    expect(json.statusCode).toBe(400);
    expect(json.json()).toMatchObject({ code: 'INVALID_MULTIPART' });

    const truncated = await t.app.inject({
      method: 'POST',
      url: UPLOAD,
      payload: '--abc\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nxx',
      headers: { 'content-type': 'multipart/form-data; boundary=abc', ...user.headers },
    });
    expect(truncated.statusCode).toBe(400);
    await nothingWrittenFor(user);
  });

  it('is 401 without a token', async () => {
    const before = await countRows(t, 'evidence');
    const res = await upload(null, TINY_PNG);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(await countRows(t, 'evidence')).toBe(before);
  });

  it('is 409 for a user already Verified', async () => {
    const user = await newUser(t, { identity: 'Verified' });
    const res = await upload(user, TINY_PNG);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'IDENTITY_ALREADY_VERIFIED' });
    expect(await countRows(t, 'evidence', 'user_id = $1', [user.id])).toBe(0);
    expect(evidenceFiles(user.id)).toEqual([]);
  });

  it('a new document supersedes a pending one: the old item is CANCELLED, one PENDING item remains', async () => {
    const user = await newUser(t);
    const first = (await upload(user, TINY_PNG)).json() as { workItemId: string };
    const second = await upload(user, TINY_PDF, { fileName: 'better.pdf' });
    expect(second.statusCode).toBe(201);
    const rows = await t.sql<{ id: string; status: string }>('select id, status from work_item where subject_id = $1 order by created_at_utc', [user.id]);
    expect(rows).toEqual([
      { id: first.workItemId, status: 'CANCELLED' },
      { id: second.json().workItemId, status: 'PENDING' },
    ]);
    expect(await countRows(t, 'evidence', 'user_id = $1', [user.id])).toBe(2);
    // The cancelled item can no longer be decided.
    const admin = await newAdmin(t);
    const late = await t.app.inject({ method: 'POST', url: decideUrl(first.workItemId), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(late.statusCode).toBe(409);
    expect(await identityStatus(user.id)).toBe('Pending');
  });

  it('a rejected user may send a new document', async () => {
    const user = await newUser(t, { identity: 'Rejected' });
    const res = await upload(user, TINY_PNG);
    expect(res.statusCode).toBe(201);
    expect(await identityStatus(user.id)).toBe('Pending');
  });

  it('removes the stored bytes when the database write fails', async () => {
    const user = await newUser(t);
    await t.sql(`create or replace function test_refuse_evidence() returns trigger language plpgsql as $$
                 begin if new.user_id = '${user.id}' then raise exception 'refused by test'; end if; return new; end $$`);
    await t.sql('create trigger test_refuse_evidence before insert on evidence for each row execute function test_refuse_evidence()');
    try {
      const res = await upload(user, TINY_PNG);
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({ code: 'INTERNAL_ERROR' });
      await nothingWrittenFor(user);
    } finally {
      await t.sql('drop trigger test_refuse_evidence on evidence');
    }
  });
});

describe('POST /api/v1/admin/verifications/identity/{workItemId}/decide', () => {
  async function pendingUser() {
    const user = await newUser(t);
    const body = (await upload(user, TINY_PNG)).json() as { workItemId: string; evidenceId: string };
    return { user, ...body };
  }

  it('APPROVED makes the user Verified and completes the item (200 with the work item)', async () => {
    const admin = await newAdmin(t);
    const { user, workItemId, evidenceId } = await pendingUser();
    const res = await t.app.inject({
      method: 'POST',
      url: decideUrl(workItemId),
      headers: admin.headers,
      payload: { outcome: 'APPROVED', notes: 'Looks <b>fine</b>' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: workItemId,
      type: 'IDENTITY_VERIFICATION',
      status: 'COMPLETED',
      territoryId: null,
      subjectType: 'User',
      subjectId: user.id,
      payload: { evidenceId },
      requiredPermission: 'SYSTEM_ADMIN',
      requiredCapability: null,
      outcome: 'APPROVED',
      notes: 'Looks fine',
      createdAtUtc: expect.any(String),
      completedAtUtc: expect.any(String),
      completedByUserId: admin.id,
    });
    expect(await identityStatus(user.id)).toBe('Verified');
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: user.headers });
    expect(me.json()).toMatchObject({ identityVerificationStatus: 'Verified' });
    expect(await countRows(t, 'audit_entry', "action = 'work_item.completed' and subject_id = $1", [workItemId])).toBe(1);
  });

  it('REJECTED makes the user Rejected; deciding again is 409', async () => {
    const admin = await newAdmin(t);
    const { user, workItemId } = await pendingUser();
    const res = await t.app.inject({ method: 'POST', url: decideUrl(workItemId), headers: admin.headers, payload: { outcome: 'REJECTED' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'COMPLETED', outcome: 'REJECTED', notes: null });
    expect(await identityStatus(user.id)).toBe('Rejected');

    const again = await t.app.inject({ method: 'POST', url: decideUrl(workItemId), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'WORK_ITEM_NOT_PENDING' });
    expect(await identityStatus(user.id)).toBe('Rejected');
  });

  it('two concurrent decisions: one 200, one 409, applied once', async () => {
    const admin = await newAdmin(t);
    const { user, workItemId } = await pendingUser();
    const [a, b] = await Promise.all([
      t.app.inject({ method: 'POST', url: decideUrl(workItemId), headers: admin.headers, payload: { outcome: 'APPROVED' } }),
      t.app.inject({ method: 'POST', url: decideUrl(workItemId), headers: admin.headers, payload: { outcome: 'REJECTED' } }),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 409]);
    const winner = a.statusCode === 200 ? a : b;
    expect(await identityStatus(user.id)).toBe(winner.json().outcome === 'APPROVED' ? 'Verified' : 'Rejected');
    expect(await countRows(t, 'audit_entry', "action = 'work_item.completed' and subject_id = $1", [workItemId])).toBe(1);
  });

  it('a decision racing a new upload never fails with a 500', async () => {
    const admin = await newAdmin(t);
    const { user, workItemId } = await pendingUser();
    const [decision, reupload] = await Promise.all([
      t.app.inject({ method: 'POST', url: decideUrl(workItemId), headers: admin.headers, payload: { outcome: 'REJECTED' } }),
      upload(user, TINY_PDF),
    ]);
    expect([200, 409]).toContain(decision.statusCode);
    expect(reupload.statusCode).toBe(201);
    expect(await countRows(t, 'work_item', "subject_id = $1 and status = 'PENDING'", [user.id])).toBe(1);
  });

  it('is 404 for an unknown id or a work item of another type', async () => {
    const admin = await newAdmin(t);
    const unknown = await t.app.inject({ method: 'POST', url: decideUrl(UNKNOWN_ID), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });

    const suggestion = await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/suggestions',
      headers: (await newUser(t)).headers,
      payload: { name: 'Vila Nova', description: 'x', city: 'Recife', state: 'PE', latitude: -8.05, longitude: -34.9 },
    });
    expect(suggestion.statusCode).toBe(201);
    const [item] = await t.sql<{ id: string }>("select id from work_item where subject_id = $1 and type = 'TERRITORY_SUGGESTION'", [suggestion.json().id]);
    const wrongType = await t.app.inject({ method: 'POST', url: decideUrl(item!.id), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(wrongType.statusCode).toBe(404);
    expect(await countRows(t, 'work_item', "id = $1 and status = 'PENDING'", [item!.id])).toBe(1);
  });

  it('is 400 for a bad outcome (NOACTION included) or a malformed id, changing nothing', async () => {
    const admin = await newAdmin(t);
    const { user, workItemId } = await pendingUser();
    for (const payload of [{ outcome: 'NOACTION' }, { outcome: 'MAYBE' }, {}, { outcome: 'APPROVED', notes: 'x'.repeat(2001) }]) {
      const res = await t.app.inject({ method: 'POST', url: decideUrl(workItemId), headers: admin.headers, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    const malformed = await t.app.inject({ method: 'POST', url: decideUrl('nope'), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(malformed.statusCode).toBe(400);
    expect(await identityStatus(user.id)).toBe('Pending');
    expect(await countRows(t, 'work_item', "id = $1 and status = 'PENDING'", [workItemId])).toBe(1);
  });

  it('is 401 without a token and 403 for a non-admin, changing nothing', async () => {
    const { user, workItemId } = await pendingUser();
    const anonymous = await t.app.inject({ method: 'POST', url: decideUrl(workItemId), payload: { outcome: 'APPROVED' } });
    expect(anonymous.statusCode).toBe(401);
    const forbidden = await t.app.inject({ method: 'POST', url: decideUrl(workItemId), headers: user.headers, payload: { outcome: 'APPROVED' } });
    expect(forbidden.statusCode).toBe(403);
    expect(await identityStatus(user.id)).toBe('Pending');
  });
});
