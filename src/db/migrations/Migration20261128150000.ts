import { Migration } from '@mikro-orm/migrations';

/**
 * The tables a person's own actions write, with the column naming them: account deletion erases these rows (the
 * erasers of src/platform/account-erasure.ts), so none may be written for an account once it is deleted.
 */
const PERSONAL_ROWS: ReadonlyArray<readonly [table: string, column: string]> = [
  ['user_interest', 'user_id'],
  ['territory_selection', 'user_id'],
  ['territory_membership', 'user_id'],
  ['join_request', 'requester_user_id'],
  ['user_preferences', 'user_id'],
  ['user_media_preferences', 'user_id'],
  ['user_block', 'blocker_user_id'],
  ['event_participation', 'user_id'],
  ['chat_participant', 'user_id'],
  ['report', 'reporter_user_id'],
  ['vote', 'user_id'],
  ['evidence', 'user_id'],
  ['media_asset', 'uploaded_by_user_id'],
  ['store', 'owner_user_id'],
  ['item', 'created_by_user_id'],
  ['cart', 'user_id'],
];

/**
 * A write that began before its user's account deletion committed could land after it: the writer's checks had
 * passed, its insert waited on the user's row (the deletion holds it `for update`, the foreign key check wants it
 * `for key share`) and then went in, since the anonymised row still exists: a join request, interests, a store
 * with its contact details outlived the erasure (and the join request could still be approved). Each of these
 * tables now refuses, before the insert, a row of a user who is deleted: the check waits for a deletion in progress
 * and reads the row as it left it (READ COMMITTED returns a locked row's newest version after the wait), and raises SQLSTATE TP001,
 * which the API answers 409 ACCOUNT_DELETED. A write whose insert came first holds the user's row until it commits,
 * so the deletion waits for it, and its erasers then see the row.
 */
export class Migration20261128150000 extends Migration {
  override name = 'Migration20261128150000';

  override up(): void | Promise<void> {
    this.addSql(`create function refuse_deleted_account() returns trigger language plpgsql as $$
declare
  owner uuid := (to_jsonb(new) ->> tg_argv[0])::uuid;
  deleted timestamptz;
begin
  -- No row seen (one inserted by the same statement, or none: the foreign key's check answers that): nothing to refuse.
  select deleted_at_utc into deleted from app_user where id = owner for key share;
  if deleted is not null then
    raise exception 'the account % has been deleted', owner using errcode = 'TP001';
  end if;
  return new;
end $$;`);
    for (const [table, column] of PERSONAL_ROWS) {
      this.addSql(
        `create trigger "${table}_refuse_deleted_account" before insert on "${table}" for each row execute function refuse_deleted_account('${column}');`,
      );
    }
  }

  override down(): void | Promise<void> {
    for (const [table] of PERSONAL_ROWS) this.addSql(`drop trigger "${table}_refuse_deleted_account" on "${table}";`);
    this.addSql(`drop function refuse_deleted_account();`);
  }
}
