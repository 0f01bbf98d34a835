import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlQuery } from '../../src/db/sql.js';
import {
  conversationByIdQuery,
  firstSeqAtOrAfterQuery,
  messagesAfterQuery,
  messagesBeforeQuery,
  territoryConversationsQuery,
} from '../../src/routers/chat/chat.queries.js';
import { newTerritory, type TestUser } from '../factories/index.js';
import { newId } from '../../src/platform/ids.js';
import { genericPlanOf, planOf, planSummary } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Page {
  messages: { id: string; text: string; createdAtUtc: string }[];
  nextCursor: { beforeCreatedAtUtc: string; beforeMessageId: string } | null;
}

describe('cursor paging of messages', () => {
  it('is complete and stable while messages arrive concurrently: no duplicate, no gap', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const writers: TestUser[] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const api = chatApi(t);
    const channel = await api.channelId(territory.id, writers[0]!, 'TERRITORY_PUBLIC');
    for (let i = 0; i < 60; i++) expect((await api.send(channel, writers[i % 2]!, { text: `before ${i}` })).statusCode).toBe(201);
    const existing = (await t.sql<{ id: string }>('select id from chat_message where conversation_id = $1 order by seq desc', [channel])).map((r) => r.id);

    const seen: string[] = [];
    let cursor: Page['nextCursor'] = null;
    let concurrent = 0;
    for (let round = 0; round < 100; round++) {
      const query = cursor
        ? `?limit=7&beforeCreatedAtUtc=${encodeURIComponent(cursor.beforeCreatedAtUtc)}&beforeMessageId=${cursor.beforeMessageId}`
        : '?limit=7';
      // Messages written at the same moment as the page is read, by two writers at once.
      const [res] = await Promise.all([
        api.messages(channel, writers[0]!, query),
        api.send(channel, writers[0]!, { text: `during ${concurrent++}` }),
        api.send(channel, writers[1]!, { text: `during ${concurrent++}` }),
      ]);
      expect(res.statusCode).toBe(200);
      const page = res.json() as Page;
      seen.push(...page.messages.map((m) => m.id));
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    // Every message that existed when paging began was served, in order; only messages written during the first
    // page's read can come before them.
    const fromStart = seen.filter((id) => existing.includes(id));
    expect(fromStart).toEqual(existing);
    const [firstOld] = existing;
    expect(seen.slice(seen.indexOf(firstOld!))).toEqual(existing);
    // Newest first, strictly: sequence numbers of what was served decrease.
    const seqs = await t.sql<{ id: string; seq: number }>('select id, seq from chat_message where id = any($1::uuid[])', [seen]);
    const seqOf = new Map(seqs.map((r) => [r.id, Number(r.seq)]));
    const served = seen.map((id) => seqOf.get(id)!);
    expect([...served].sort((x, y) => y - x)).toEqual(served);
    // The next reader from the top sees the messages written meanwhile, still once each.
    const all = (await api.messages(channel, writers[1]!, '?limit=100')).json() as Page;
    expect(new Set(all.messages.map((m) => m.id)).size).toBe(all.messages.length);
  });
});

describe('chat read paths use indexes (EXPLAIN on 6000 messages)', () => {
  let conversationId: string;
  let territoryId: string;
  let viewerId: string;
  beforeAll(async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    territoryId = territory.id;
    viewerId = (await verifiedResident(t, territory)).id;
    // 30 groups of 200 messages each, in 30 territories.
    await t.sql(`
      insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
      select gen_random_uuid(), now(), 'Chat ' || i, null, 'City', 'ST', -20, -50, 5, 'ACTIVE', '{}', '{}' from generate_series(1, 30) as i`);
    await t.sql(
      `insert into chat_conversation (id, created_at_utc, territory_id, kind, status, name, created_by_user_id, last_seq, updated_at_utc)
       select gen_random_uuid(), now(), id, 'GROUP', 'ACTIVE', 'Group', $1, 200, now() from territory where name like 'Chat %'`,
      [viewerId],
    );
    await t.sql(
      `insert into chat_message (id, created_at_utc, conversation_id, seq, sender_user_id, text, media_id)
       select gen_random_uuid(), now() - make_interval(secs => 200 - s), c.id, s, $1, 'Message ' || s, null
         from chat_conversation c, generate_series(1, 200) as s where c.kind = 'GROUP'`,
      [viewerId],
    );
    await t.sql(
      `insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_seq) select id, $1, 'MEMBER', now(), 100 from chat_conversation where kind = 'GROUP'`,
      [viewerId],
    );
    // And 3000 quiet groups with their participants, so the conversation and participant tables are not tiny.
    await t.sql(
      `insert into chat_conversation (id, created_at_utc, territory_id, kind, status, name, created_by_user_id, last_seq, updated_at_utc)
       select gen_random_uuid(), now(), ts.ids[1 + i % 30], 'GROUP', case when i % 3 = 0 then 'PENDING_APPROVAL' else 'ACTIVE' end, 'Quiet', $1, 0, now()
         from generate_series(1, 3000) as i, (select array_agg(id) as ids from territory where name like 'Chat %') ts`,
      [viewerId],
    );
    await t.sql(
      `insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_seq)
       select id, $1, 'OWNER', now(), 0 from chat_conversation where name = 'Quiet'`,
      [viewerId],
    );
    await t.sql('vacuum analyze chat_conversation, chat_message, chat_participant');
    conversationId = (await t.sql<{ id: string }>(`select id from chat_conversation where kind = 'GROUP' limit 1`))[0]!.id;
  });

  async function expectIndexed(query: SqlQuery, index: RegExp) {
    const nodes = await planOf(t, query);
    const summary = nodes
      .map((n) => `${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''}${n['Relation Name'] ? ` (${n['Relation Name']})` : ''}`)
      .join(' > ');
    expect(
      nodes.some((n) => n['Node Type'] === 'Seq Scan' && ['chat_message', 'chat_conversation', 'chat_participant'].includes(n['Relation Name'] ?? '')),
      summary,
    ).toBe(false);
    expect(
      nodes.some((n) => index.test(n['Index Name'] ?? '')),
      summary,
    ).toBe(true);
  }

  it('a page before a cursor, the live catch-up after a sequence number, the instant boundary', async () => {
    await expectIndexed(messagesBeforeQuery(conversationId, 150, [viewerId.replace(/.$/, '0')], 51), /^chat_message_conversation_id_seq_unique$/);
    await expectIndexed(messagesBeforeQuery(conversationId, null, [], 51), /^chat_message_conversation_id_seq_unique$/);
    await expectIndexed(messagesAfterQuery(conversationId, 190, [], 100), /^chat_message_conversation_id_seq_unique$/);
    await expectIndexed(firstSeqAtOrAfterQuery(conversationId, new Date(Date.now() - 50_000)), /^chat_message_conversation_id_created_at_utc_index$/);
  });

  it('a conversation with its unread count, and a territory listing', async () => {
    // Also for a reader who blocked someone: the newest message of anyone else is read backwards on the same index.
    for (const hiddenSenders of [[], [viewerId.replace(/.$/, '0')]]) {
      const participant = { id: viewerId, readsUnjoined: false, hiddenSenders };
      await expectIndexed(conversationByIdQuery(conversationId, participant), /^chat_message_conversation_id_seq_unique$/);
      await expectIndexed(territoryConversationsQuery(territoryId, ['GROUP'], ['ACTIVE'], participant), /^chat_conversation_territory_id_kind_status_index$/);
    }
  });

  it('the same reads by a SYSTEM_ADMIN, and by someone who may not read (their counts withheld), stay indexed', async () => {
    for (const viewer of [
      { id: newId(), readsUnjoined: true, hiddenSenders: [] },
      { id: newId(), readsUnjoined: false, hiddenSenders: [] },
    ]) {
      await expectIndexed(conversationByIdQuery(conversationId, viewer), /^chat_conversation_pkey$/);
      await expectIndexed(territoryConversationsQuery(territoryId, ['GROUP'], ['ACTIVE'], viewer), /^chat_conversation_territory_id_kind_status_index$/);
    }
    // The one named, as a service runs it: its generic plan counts on the (conversation, seq) index.
    const generic = await genericPlanOf(t, conversationByIdQuery(conversationId, { id: viewerId, readsUnjoined: false, hiddenSenders: [] }));
    expect(
      generic.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']),
      planSummary(generic),
    ).toEqual([]);
    expect(
      generic.some((n) => n['Index Name'] === 'chat_message_conversation_id_seq_unique'),
      planSummary(generic),
    ).toBe(true);
  });
});
