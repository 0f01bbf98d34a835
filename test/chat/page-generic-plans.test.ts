import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOnPool, runPreparedOnPool, type SqlQuery } from '../../src/db/sql.js';
import { isNamedMessagePage, messagesBeforeQuery, type MessageRow } from '../../src/routers/chat/chat.queries.js';
import { MESSAGES_LIMIT_DEFAULT } from '../../src/routers/chat/chat.schemas.js';
import { newTerritory, newUser } from '../factories/index.js';
import { genericPlanOf, planSummary } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * A message page of the default size, read by someone who blocked nobody or by someone who did, is a named statement
 * that keeps one generic plan (`isNamedMessagePage`, chat.queries.ts). Here, as on a young platform, 3,000 conversations hold two messages
 * each and one holds 20,000: the generic plan, costed for an unknown conversation and bound, must still walk the
 * (conversation, seq) index backwards and stop at the page, never gather a conversation's messages and sort them.
 * The tables are analyzed, not vacuumed (no visibility map), as in test/platform/generic-plans.test.ts.
 */
let t: TestApp;
let big: string;
let small: string[];
/** Someone who wrote every tenth message of the large conversation (a reader who blocked them reads around them). */
let other: string;
const PAGE_ROWS = MESSAGES_LIMIT_DEFAULT + 1;

beforeAll(async () => {
  t = await createTestApp();
  const sender = (await newUser(t)).id;
  const territory = await newTerritory(t);
  await t.sql('alter table chat_message set (autovacuum_enabled = false)');
  await t.sql(
    `insert into chat_conversation (id, created_at_utc, territory_id, kind, status, name, created_by_user_id, last_seq, updated_at_utc)
     select gen_random_uuid(), now(), $1, 'GROUP', 'ACTIVE', 'Group ' || lpad(i::text, 4, '0'), $2, case when i = 0 then 20000 else 2 end, now()
       from generate_series(0, 3000) as i`,
    [territory.id, sender],
  );
  big = (await t.sql<{ id: string }>(`select id from chat_conversation where name = 'Group 0000'`))[0]!.id;
  await t.sql(
    `insert into chat_message (id, created_at_utc, conversation_id, seq, sender_user_id, text, media_id)
     select gen_random_uuid(), now() - make_interval(secs => c.last_seq - s), c.id, s, $1, 'Message ' || s, null
       from chat_conversation c cross join lateral generate_series(1, c.last_seq) as s where c.name like 'Group %'`,
    [sender],
  );
  small = (await t.sql<{ id: string }>(`select id from chat_conversation where name in ('Group 0001', 'Group 0002')`)).map((r) => r.id);
  other = (await newUser(t)).id;
  await t.sql(`update chat_message set sender_user_id = $1 where conversation_id = $2 and seq % 10 = 0`, [other, big]);
  await t.sql('analyze');
});
afterAll(() => t.close());

const page = (conversationId: string, beforeSeq: number | null, hidden: string[] = []) => messagesBeforeQuery(conversationId, beforeSeq, hidden, PAGE_ROWS);

describe('a message page as a named statement', () => {
  it('is named only for the default size', () => {
    expect(isNamedMessagePage(PAGE_ROWS)).toBe(true);
    expect(isNamedMessagePage(8)).toBe(false);
  });

  it('its generic plan walks the (conversation, seq) index backwards and stops at the page: no sort', async () => {
    for (const hidden of [[], [other]]) {
      const nodes = await genericPlanOf(t, page(big, null, hidden));
      const reads = nodes.filter((n) => n['Relation Name'] === 'chat_message');
      expect(
        reads.map((n) => `${n['Node Type']} ${n['Scan Direction']} on ${n['Index Name']}`),
        planSummary(nodes),
      ).toEqual(['Index Scan Backward on chat_message_conversation_id_seq_unique']);
      expect(
        nodes.filter((n) => n['Node Type'].includes('Sort')).map((n) => n['Node Type']),
        planSummary(nodes),
      ).toEqual([]);
    }
  });

  it('a reader who blocked someone: the same plan kept, their messages left out, the same rows as the unnamed page', async () => {
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const calls: [number | null, string[]][] = [
        [null, [other]],
        [19_000, [other]],
        [52, [other, small[0]!]],
        [null, [small[0]!]],
        [10_000, [other]],
        [31, [other]],
        [null, [other]],
        [2, [other]],
      ];
      for (const [beforeSeq, hidden] of calls) {
        const named = await runPreparedOnPool<MessageRow>(pool, page(big, beforeSeq, hidden));
        const plain: SqlQuery = {
          sql: `select m.id, m.seq from chat_message m where m.conversation_id = $1::uuid and m.seq < $2::int and m.sender_user_id <> all($3::uuid[])
                 order by m.seq desc limit $4::int`,
          params: [big, beforeSeq ?? 2147483647, hidden, PAGE_ROWS],
        };
        const expected = await runOnPool<{ id: string; seq: number }>(pool, plain);
        expect(
          named.map((r) => [r.id, r.seq]),
          JSON.stringify({ beforeSeq, hidden }),
        ).toEqual(expected.map((r) => [r.id, r.seq]));
        if (hidden.includes(other)) expect(named.some((r) => r.seq % 10 === 0)).toBe(false);
      }
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
        `select generic_plans, custom_plans from pg_prepared_statements where statement like '%chat_message m%'`,
      );
      expect(rows.map((r) => [Number(r.custom_plans), Number(r.generic_plans)])).toEqual([[5, calls.length - 5]]);
    } finally {
      await pool.end();
    }
  });

  it('keeps that generic plan for the large conversation and small ones, first and later pages, with the same rows as the unnamed page', async () => {
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const calls: [string, number | null][] = [
        [big, null],
        [big, 19_000],
        [small[0]!, null],
        [big, 52],
        [small[1]!, 2],
        [big, 10_000],
        [small[0]!, null],
        [big, null],
        [big, 1],
        [small[1]!, null],
      ];
      for (const [conversationId, beforeSeq] of calls) {
        const named = await runPreparedOnPool<MessageRow>(pool, page(conversationId, beforeSeq));
        // The same page with the conversation, bound and limit as plain parameters, unnamed.
        const plain: SqlQuery = {
          sql: `select m.id, m.seq from chat_message m where m.conversation_id = $1::uuid and m.seq < $2::int order by m.seq desc limit $3::int`,
          params: [conversationId, beforeSeq ?? 2147483647, PAGE_ROWS],
        };
        const expected = await runOnPool<{ id: string; seq: number }>(pool, plain);
        expect(
          named.map((r) => [r.id, r.seq]),
          JSON.stringify({ conversationId, beforeSeq }),
        ).toEqual(expected.map((r) => [r.id, r.seq]));
      }
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
        `select generic_plans, custom_plans from pg_prepared_statements where statement like '%chat_message m%'`,
      );
      expect(rows.map((r) => [Number(r.custom_plans), Number(r.generic_plans)])).toEqual([[5, calls.length - 5]]);
    } finally {
      await pool.end();
    }
  });
});
