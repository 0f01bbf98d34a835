import { newId } from '../../src/platform/ids.js';
import { addMembership, newUser, type TestUser } from '../factories/index.js';
import type { TestApp } from '../setup/test-app.js';

/** Every chat flag of the spec. */
export const CHAT_FLAGS = [
  'CHATENABLED',
  'CHATTERITORYPUBLICCHANNEL',
  'CHATTERITORYRESIDENTSCHANNEL',
  'CHATGROUPS',
  'CHATDMENABLED',
  'CHATMEDIAENABLED',
  'CHATMEDIAIMAGESENABLED',
  'CHATMEDIAAUDIOENABLED',
];

/** An identity-Verified RESIDENT of the territory (what writes the channels and creates groups). */
export async function verifiedResident(t: TestApp, territory: { id: string }) {
  const user = await newUser(t, { identity: 'Verified' });
  await addMembership(t, user, territory, { role: 'RESIDENT', geoVerified: true });
  return user;
}

export async function verifiedVisitor(t: TestApp, territory: { id: string }) {
  const user = await newUser(t, { identity: 'Verified' });
  await addMembership(t, user, territory, { role: 'VISITOR' });
  return user;
}

export function chatApi(t: TestApp) {
  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, user: TestUser | null, payload?: Record<string, unknown>) => {
    const res = await t.app.inject({ method, url, headers: user ? user.headers : {}, ...(payload !== undefined ? { payload } : {}) });
    return res;
  };
  return {
    call,
    channels: (territoryId: string, user: TestUser | null) => call('GET', `/api/v1/territories/${territoryId}/chat/channels`, user),
    channelId: async (territoryId: string, user: TestUser, kind: 'TERRITORY_PUBLIC' | 'TERRITORY_RESIDENTS') => {
      const res = await call('GET', `/api/v1/territories/${territoryId}/chat/channels`, user);
      const channel = (res.json() as { channels: { id: string; kind: string }[] }).channels.find((c) => c.kind === kind);
      if (!channel) throw new Error(`no ${kind} channel: ${res.statusCode} ${res.body}`);
      return channel.id;
    },
    send: (conversationId: string, user: TestUser | null, payload: Record<string, unknown>) =>
      call('POST', `/api/v1/chat/conversations/${conversationId}/messages`, user, payload),
    messages: (conversationId: string, user: TestUser | null, query = '') => call('GET', `/api/v1/chat/conversations/${conversationId}/messages${query}`, user),
    createGroup: (territoryId: string, user: TestUser | null, payload: Record<string, unknown>) =>
      call('POST', `/api/v1/territories/${territoryId}/chat/groups`, user, payload),
    groupAction: (territoryId: string, groupId: string, action: string, user: TestUser | null) =>
      call('POST', `/api/v1/territories/${territoryId}/chat/groups/${groupId}/${action}`, user),
    direct: (user: TestUser | null, payload: Record<string, unknown>) => call('POST', '/api/v1/chat/direct', user, payload),
  };
}

/** A media asset row of the user (the upload path is tested by the media domain). */
export async function mediaAsset(
  t: TestApp,
  owner: TestUser,
  opts: { mediaType: 'IMAGE' | 'VIDEO' | 'AUDIO'; mimeType: string; sizeBytes?: number; durationSeconds?: number | null },
) {
  const id = newId();
  await t.sql(
    `insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, duration_seconds, storage_key)
     values ($1, now(), $2, $3, $4, $5, $6, $7)`,
    [id, owner.id, opts.mediaType, opts.mimeType, opts.sizeBytes ?? 1000, opts.durationSeconds ?? null, `test/${id}`],
  );
  return id;
}
