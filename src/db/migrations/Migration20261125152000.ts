import { Migration } from '@mikro-orm/migrations';

/**
 * The voting state machine (VOTING_TRANSITIONS in src/entities/voting.entity.ts) held by the database too: a status
 * change it does not allow is refused whoever writes it. test/governance/voting-rules.test.ts checks that this
 * trigger and the table agree on every pair of statuses.
 */
export class Migration20261125152000 extends Migration {
  override name = 'Migration20261125152000';

  override up(): void | Promise<void> {
    this.addSql(`create function voting_status_transition() returns trigger language plpgsql as $$
      begin
        if new.status is distinct from old.status and not (
             (new.status = 'Open' and old.status = 'Draft')
          or (new.status = 'Closed' and old.status = 'Open')
          or (new.status in ('Approved', 'Rejected') and old.status in ('Open', 'Closed'))) then
          raise exception 'a voting cannot move from % to %', old.status, new.status using errcode = 'check_violation';
        end if;
        return new;
      end $$;`);
    this.addSql(`create trigger "voting_status_transition" before update of "status" on "voting" for each row execute function voting_status_transition();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "voting_status_transition" on "voting";`);
    this.addSql(`drop function voting_status_transition();`);
  }
}
