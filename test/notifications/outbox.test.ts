import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuditEntry } from '../../src/entities/audit.entity.js';
import { dispatchOutbox } from '../../src/routers/notifications/outbox-dispatch.job.js';
import { newId } from '../../src/platform/ids.js';
import { NOTIFICATION_CHANNEL } from '../../src/routers/notifications/notifications.live.js';
import { residentsQuery } from '../../src/routers/memberships/memberships.queries.js';
import { enqueueNotification, enqueueNotificationTo, OUTBOX_CHANNEL, type OutgoingNotification } from '../../src/routers/notifications/outbox.js';
import { countRows, newResident, newTerritory, newUser, newVisitor, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

// No job workers here: the tests run the dispatcher themselves, at the moments they choose.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
});
afterAll(() => t.close());

const em = () => t.deps.orm.em.fork() as EntityManager;

function outgoing(recipients: TestUser[], overrides: Partial<OutgoingNotification> = {}): OutgoingNotification {
  const causeId = newId();
  return {
    type: 'JOIN_REQUEST_RECEIVED',
    recipientUserIds: recipients.map((r) => r.id),
    title: 'New join request',
    body: 'Someone wants to become a resident.',
    data: { joinRequestId: causeId },
    sourceKey: `join-request:${causeId}:received`,
    ...overrides,
  };
}

async function enqueue(...items: OutgoingNotification[]) {
  const e = em();
  for (const item of items) enqueueNotification(e, item);
  await e.flush();
}

const notificationsOf = (user: TestUser) =>
  t.sql<{ id: string; source_key: string; type: string; title: string; data: Record<string, unknown> }>(
    'select id, source_key, type, title, data from notification where user_id = $1 order by created_at_utc',
    [user.id],
  );

/** A connection listening on the outbox channel, and the signals it has received so far. */
async function listenToOutbox() {
  const listener = new pg.Client({ connectionString: t.databaseUrl });
  await listener.connect();
  const signals: string[] = [];
  listener.on('notification', (m) => signals.push(m.channel));
  await listener.query(`listen ${OUTBOX_CHANNEL}`);
  return { listener, signals };
}

beforeEach(async () => {
  // Each test starts with an empty outbox so the dispatcher's counts are the test's own.
  await dispatchOutbox(em());
});

describe('enqueueNotification', () => {
  it('commits the outbox row with the transaction of its cause, and a rollback drops both', async () => {
    const user = await newUser(t);
    const subjectId = newId();
    await expect(
      em().transactional(async (tx) => {
        tx.create(AuditEntry, { actorUserId: user.id, action: 'test.cause', subjectType: 'Test', subjectId });
        enqueueNotification(tx, outgoing([user], { sourceKey: `test:${subjectId}` }));
        await tx.flush();
        throw new Error('the cause failed');
      }),
    ).rejects.toThrow('the cause failed');
    expect(await countRows(t, 'audit_entry', 'subject_id = $1', [subjectId])).toBe(0);
    expect(await countRows(t, 'outbox_message', 'source_key = $1', [`test:${subjectId}`])).toBe(0);

    await em().transactional(async (tx) => {
      tx.create(AuditEntry, { actorUserId: user.id, action: 'test.cause', subjectType: 'Test', subjectId });
      enqueueNotification(tx, outgoing([user, user], { sourceKey: `test:${subjectId}`, title: 'x'.repeat(500) }));
    });
    expect(await countRows(t, 'audit_entry', 'subject_id = $1', [subjectId])).toBe(1);
    const [row] = await t.sql<{ type: string; recipient_user_ids: string[]; title: string; processed_at_utc: Date | null }>(
      'select type, recipient_user_ids, title, processed_at_utc from outbox_message where source_key = $1',
      [`test:${subjectId}`],
    );
    expect(row).toMatchObject({ type: 'JOIN_REQUEST_RECEIVED', recipient_user_ids: [user.id], processed_at_utc: null });
    // Over-long titles are shortened rather than failing the cause.
    expect(row?.title).toHaveLength(200);
  });

  it('writes nothing without recipients', async () => {
    const before = await countRows(t, 'outbox_message');
    const e = em();
    expect(enqueueNotification(e, outgoing([]))).toBeNull();
    await e.flush();
    expect(await countRows(t, 'outbox_message')).toBe(before);
  });

  it('signals the dispatcher (NOTIFY outbox_pending) only when the transaction commits', async () => {
    const { listener, signals } = await listenToOutbox();
    try {
      const user = await newUser(t);
      await em()
        .transactional(async (tx) => {
          enqueueNotification(tx, outgoing([user]));
          await tx.flush();
          throw new Error('rolled back');
        })
        .catch(() => {});
      await listener.query('select 1');
      expect(signals).toEqual([]);

      await em().transactional(async (tx) => {
        enqueueNotification(tx, outgoing([user]));
      });
      await expect.poll(() => signals.length).toBe(1);

      // A plain flush (its own implicit transaction) signals too.
      await enqueue(outgoing([user]));
      await expect.poll(() => signals.length).toBe(2);
    } finally {
      await listener.end();
    }
  });
});

describe('enqueueNotificationTo (recipients selected by PostgreSQL in the transaction)', () => {
  it("writes one row for the territory's residents but the author, with the transaction, signalled at commit; nobody selected writes nothing", async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const residents = [await newResident(t, territory), await newResident(t, territory)];
    await newVisitor(t, territory);
    const gone = await newResident(t, territory);
    await t.sql('update app_user set deleted_at_utc = now() where id = $1', [gone.id]);
    const { listener, signals } = await listenToOutbox();
    try {
      const { recipientUserIds: _, ...n } = outgoing([]);
      await expect(
        em().transactional(async (tx) => {
          await enqueueNotificationTo(tx, residentsQuery(territory.id, author.id), n);
          throw new Error('the cause failed');
        }),
      ).rejects.toThrow('the cause failed');
      await listener.query('select 1');
      expect(signals).toEqual([]);
      expect(await countRows(t, 'outbox_message', 'source_key = $1', [n.sourceKey])).toBe(0);

      await em().transactional((tx) => enqueueNotificationTo(tx, residentsQuery(territory.id, author.id), n));
      const [row] = await t.sql<{ recipient_user_ids: string[]; title: string; data: unknown }>(
        'select recipient_user_ids, title, data from outbox_message where source_key = $1',
        [n.sourceKey],
      );
      expect(row?.recipient_user_ids.sort()).toEqual(residents.map((r) => r.id).sort());
      expect(row).toMatchObject({ title: n.title, data: n.data });
      await expect.poll(() => signals.length).toBe(1);

      // A territory whose only resident is the author: no row, no signal.
      const alone = await newTerritory(t);
      const only = await newResident(t, alone);
      const before = await countRows(t, 'outbox_message');
      await em().transactional((tx) => enqueueNotificationTo(tx, residentsQuery(alone.id, only.id), { ...n, sourceKey: `test:${newId()}` }));
      expect(await countRows(t, 'outbox_message')).toBe(before);
      await listener.query('select 1');
      expect(signals).toHaveLength(1);

      await dispatchOutbox(em());
      for (const resident of residents) expect((await notificationsOf(resident)).map((x) => x.source_key)).toEqual([n.sourceKey]);
      expect(await notificationsOf(author)).toEqual([]);
    } finally {
      await listener.end();
    }
  });
});

describe('dispatchOutbox', () => {
  it('creates one notification per recipient and marks the row processed; a second run delivers nothing', async () => {
    const [a, b] = [await newUser(t), await newUser(t)];
    const item = outgoing([a, b]);
    await enqueue(item);
    expect(await dispatchOutbox(em())).toEqual({ messages: 1, delivered: 2 });
    expect(await dispatchOutbox(em())).toEqual({ messages: 0, delivered: 0 });
    for (const user of [a, b]) {
      const rows = await notificationsOf(user);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ source_key: item.sourceKey, type: 'JOIN_REQUEST_RECEIVED', title: item.title, data: item.data });
    }
    expect(await countRows(t, 'outbox_message', 'source_key = $1 and processed_at_utc is not null', [item.sourceKey])).toBe(1);
  });

  it('re-run over the same rows (processed flag reset) still leaves exactly one notification per recipient', async () => {
    const [a, b] = [await newUser(t), await newUser(t)];
    const item = outgoing([a, b]);
    await enqueue(item);
    await dispatchOutbox(em());
    await t.sql('update outbox_message set processed_at_utc = null where source_key = $1', [item.sourceKey]);
    expect(await dispatchOutbox(em())).toEqual({ messages: 1, delivered: 0 });
    expect(await notificationsOf(a)).toHaveLength(1);
    expect(await notificationsOf(b)).toHaveLength(1);
  });

  it('a dispatcher killed mid-batch delivers nothing from that batch; the re-run delivers exactly once each', async () => {
    const users = [await newUser(t), await newUser(t), await newUser(t)];
    const first = outgoing(users);
    const second = outgoing(users.slice(0, 2));
    await enqueue(first, second);

    let calls = 0;
    await expect(
      dispatchOutbox(em(), {
        afterMessage: () => {
          calls++;
          throw new Error('worker killed');
        },
      }),
    ).rejects.toThrow('worker killed');
    expect(calls).toBe(1);
    expect(await countRows(t, 'notification', 'source_key in ($1, $2)', [first.sourceKey, second.sourceKey])).toBe(0);
    expect(await countRows(t, 'outbox_message', 'source_key in ($1, $2) and processed_at_utc is null', [first.sourceKey, second.sourceKey])).toBe(2);

    expect(await dispatchOutbox(em())).toEqual({ messages: 2, delivered: 5 });
    expect(await dispatchOutbox(em())).toEqual({ messages: 0, delivered: 0 });
    expect((await notificationsOf(users[0]!)).map((n) => n.source_key).sort()).toEqual([first.sourceKey, second.sourceKey].sort());
    expect(await notificationsOf(users[2]!)).toHaveLength(1);
  });

  it('when an earlier run already delivered to some recipients, only the others get one', async () => {
    const [a, b] = [await newUser(t), await newUser(t)];
    const item = outgoing([a, b]);
    // What a crashed run may have left: a's notification for this cause exists, the outbox row is still pending.
    await enqueue(outgoing([a], { sourceKey: item.sourceKey }));
    await dispatchOutbox(em());
    await enqueue(item);
    expect(await dispatchOutbox(em())).toEqual({ messages: 1, delivered: 1 });
    expect(await notificationsOf(a)).toHaveLength(1);
    expect(await notificationsOf(b)).toHaveLength(1);
  });

  it('two dispatchers running concurrently deliver every message exactly once', async () => {
    const users = [await newUser(t), await newUser(t), await newUser(t)];
    const items = Array.from({ length: 40 }, () => outgoing(users));
    await enqueue(...items);
    const results = await Promise.all([dispatchOutbox(em(), { batchSize: 3 }), dispatchOutbox(em(), { batchSize: 3 })]);
    expect(results.reduce((sum, r) => sum + r.messages, 0)).toBe(40);
    expect(results.reduce((sum, r) => sum + r.delivered, 0)).toBe(120);
    for (const user of users) expect(await notificationsOf(user)).toHaveLength(40);
    const duplicates = await t.sql('select source_key, user_id from notification group by 1, 2 having count(*) > 1');
    expect(duplicates).toEqual([]);
  });

  it("honours each recipient's preference flag for the type", async () => {
    const [optedOut, otherTypeOff, defaults] = [await newUser(t), await newUser(t), await newUser(t)];
    const setFlags = (user: TestUser, flags: Record<string, boolean>) =>
      t.sql(`insert into user_preferences (user_id, notifications, created_at_utc, updated_at_utc) values ($1, $2, now(), now())`, [
        user.id,
        JSON.stringify(flags),
      ]);
    await setFlags(optedOut, { JOIN_REQUEST_RECEIVED: false });
    await setFlags(otherTypeOff, { POST_CREATED: false });
    await enqueue(outgoing([optedOut, otherTypeOff, defaults]));
    expect(await dispatchOutbox(em())).toEqual({ messages: 1, delivered: 2 });
    expect(await notificationsOf(optedOut)).toHaveLength(0);
    expect(await notificationsOf(otherTypeOff)).toHaveLength(1);
    expect(await notificationsOf(defaults)).toHaveLength(1);
  });

  it('skips recipients that are not (or no longer) users instead of failing the batch', async () => {
    const [user, deleted] = [await newUser(t), await newUser(t)];
    await t.sql('update app_user set deleted_at_utc = now() where id = $1', [deleted.id]);
    const item = outgoing([user, deleted]);
    item.recipientUserIds.push(newId());
    await enqueue(item);
    expect(await dispatchOutbox(em())).toEqual({ messages: 1, delivered: 1 });
    expect(await countRows(t, 'outbox_message', 'source_key = $1 and processed_at_utc is null', [item.sourceKey])).toBe(0);
  });

  it('announces each new notification on the notification channel, after commit', async () => {
    const listener = new pg.Client({ connectionString: t.databaseUrl });
    await listener.connect();
    const payloads: { userId: string; notificationId: string }[] = [];
    listener.on('notification', (m) => payloads.push(JSON.parse(m.payload ?? '{}')));
    await listener.query(`listen ${NOTIFICATION_CHANNEL}`);
    try {
      const [a, b] = [await newUser(t), await newUser(t)];
      await enqueue(outgoing([a, b]));
      await dispatchOutbox(em());
      await expect.poll(() => payloads.length).toBe(2);
      const stored = [...(await notificationsOf(a)), ...(await notificationsOf(b))];
      expect(payloads.map((p) => p.notificationId).sort()).toEqual(stored.map((n) => n.id).sort());
      expect(payloads.map((p) => p.userId).sort()).toEqual([a.id, b.id].sort());
    } finally {
      await listener.end();
    }
  });
});
