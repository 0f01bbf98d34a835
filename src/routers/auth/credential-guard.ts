/**
 * Every check of a secret a person types (TOTP codes, recovery codes; later client secrets) goes through
 * `guardedCheck`: at most MAX_ATTEMPTS per subject within WINDOW_MS, whatever the challenge, session or transport.
 * The attempt is counted, in its own statement, before the secret is checked, so a burst of parallel guesses is
 * cut at the limit instead of racing past it; a success clears the count. Past the limit the answer is the spec's
 * 429 until the window ends. A TOTP code has a million values: 10 guesses per 15 minutes leave an attacker with a
 * chance of about 1 in 100 000 per day.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { tooManyRequests } from '../../platform/problems.js';
import { enqueueNotification } from '../notifications/outbox.js';

const MAX_ATTEMPTS = 10;
const WINDOW_MS = 15 * 60_000;

/** What is guessed and whose: the key its attempts are counted under, and the person told when it locks. */
export interface CredentialSubject {
  key: string;
  /** Told (notification) when the subject locks; null for a credential of no person (a client secret). */
  userId: string | null;
  /** In the notification: "your second factor". */
  label: string;
}

/** The subject of every second-factor check of a user (login challenges, confirm, disable, step-up alike). */
export const secondFactorSubject = (userId: string): CredentialSubject => ({ key: `second-factor:${userId}`, userId, label: 'second factor' });

/**
 * Runs `check` unless the subject's attempts are spent (then 429, and `check` is not run). `em` must not be inside a
 * transaction: the count has to survive the caller's failure.
 */
export async function guardedCheck(em: EntityManager, subject: CredentialSubject, now: Date, check: () => Promise<boolean>): Promise<boolean> {
  const subjectKey = subject.key;
  const [row] = await execSql<{ attempts: number }>(
    em,
    `insert into credential_attempt (subject_key, attempts, window_started_at_utc) values (?, 1, ?)
     on conflict (subject_key) do update set
       attempts = case when credential_attempt.window_started_at_utc <= ?::timestamptz - ?::interval then 1 else credential_attempt.attempts + 1 end,
       window_started_at_utc = case when credential_attempt.window_started_at_utc <= ?::timestamptz - ?::interval then excluded.window_started_at_utc
                                    else credential_attempt.window_started_at_utc end
     returning attempts`,
    [subjectKey, now, now, `${WINDOW_MS} milliseconds`, now, `${WINDOW_MS} milliseconds`],
  );
  if ((row?.attempts ?? 0) > MAX_ATTEMPTS) {
    if (row?.attempts === MAX_ATTEMPTS + 1) {
      // Once per lock: the person learns that someone is guessing, and can sign out everywhere.
      audit(em, { actorUserId: null, action: 'auth.credential_locked', subjectType: 'Credential', subjectId: subjectKey });
      if (subject.userId) {
        enqueueNotification(em, {
          type: 'SECURITY_ALERT',
          recipientUserIds: [subject.userId],
          title: 'Too many wrong codes',
          body: `Your ${subject.label} was entered wrongly ${MAX_ATTEMPTS} times; it is locked for ${WINDOW_MS / 60_000} minutes. If this was not you, sign out everywhere.`,
          data: { subject: subject.label, lockedUntilUtc: new Date(now.getTime() + WINDOW_MS).toISOString() },
          sourceKey: `credential-locked:${subjectKey}:${now.getTime()}`,
        });
      }
      await em.flush();
    }
    throw tooManyRequests();
  }
  const ok = await check();
  if (ok) await execSql(em, 'delete from credential_attempt where subject_key = ?', [subjectKey]);
  return ok;
}
