import { Migration } from '@mikro-orm/migrations';

/**
 * Payout lines (spec Payout rule 4, "a payout over maximumPayoutAmountInCents is split"): what each payout carries of
 * each seller transaction, so a transaction larger than the maximum is paid in several payouts of at most the
 * maximum. The existing payouts never split a transaction, so each gets one line per transaction it carried, of that
 * transaction's whole net. The database holds the rules (src/entities/payout.entity.ts): a payout's lines add up to
 * its amount and are its seller's, territory's and currency's, a transaction's lines in live payouts never exceed its
 * net, lines are never changed, and a payout moves only PENDING -> PROCESSING -> COMPLETED | FAILED with its amount
 * fixed.
 */
export class Migration20261128002614 extends Migration {
  override name = 'Migration20261128002614';

  override up(): void | Promise<void> {
    this.addSql(`create table "payout_line" ("id" uuid not null, "created_at_utc" timestamptz not null, "payout_id" uuid not null, "seller_transaction_id" uuid not null, "amount_in_cents" bigint not null, primary key ("id"));`);
    this.addSql(`create index "payout_line_seller_transaction_id_index" on "payout_line" ("seller_transaction_id");`);
    this.addSql(`alter table "payout_line" add constraint "payout_line_payout_transaction_unique" unique ("payout_id", "seller_transaction_id");`);
    this.addSql(`alter table "payout_line" add constraint "payout_line_payout_id_foreign" foreign key ("payout_id") references "payout" ("id") on delete cascade;`);
    this.addSql(`alter table "payout_line" add constraint "payout_line_seller_transaction_id_foreign" foreign key ("seller_transaction_id") references "seller_transaction" ("id") on delete cascade;`);
    this.addSql(`alter table "payout_line" add constraint "payout_line_amount_check" check (amount_in_cents >= 0);`);

    // Before the triggers exist (the payouts of PAID transactions would not pass the READY check of a new line).
    this.addSql(`insert into "payout_line" ("id", "created_at_utc", "payout_id", "seller_transaction_id", "amount_in_cents")
      select gen_random_uuid(), p.created_at_utc, p.id, st.id, st.net_amount_in_cents
        from payout p cross join lateral unnest(p.transaction_ids) as t(id) join seller_transaction st on st.id = t.id::uuid;`);

    this.addSql(`create function payout_status_transition() returns trigger language plpgsql as $$
begin
  if new.status is distinct from old.status and not (
       (old.status = 'PENDING' and new.status = 'PROCESSING')
    or (old.status = 'PROCESSING' and new.status in ('COMPLETED', 'FAILED'))) then
    raise exception 'a payout cannot move from % to %', old.status, new.status using errcode = 'check_violation';
  end if;
  if (new.amount_in_cents, new.seller_user_id, new.territory_id, new.currency) is distinct from (old.amount_in_cents, old.seller_user_id, old.territory_id, old.currency) then
    raise exception 'payout %: its amount, seller, territory and currency are never changed', old.id using errcode = 'restrict_violation';
  end if;
  return new;
end $$;`);
    this.addSql(`create function payout_line_check() returns trigger language plpgsql as $$
declare
  po record;
  st record;
  carried bigint;
  live bigint;
begin
  select territory_id, seller_user_id, currency, amount_in_cents into po from payout where id = new.payout_id;
  -- The transaction's row lock puts this check after any other writer of its lines has committed (the claim holds it already).
  select territory_id, seller_user_id, currency, net_amount_in_cents, status into st from seller_transaction where id = new.seller_transaction_id for update;
  if (po.territory_id, po.seller_user_id, po.currency) is distinct from (st.territory_id, st.seller_user_id, st.currency) then
    raise exception 'payout line %: payout % and seller transaction % are of different sellers, territories or currencies', new.id, new.payout_id, new.seller_transaction_id
      using errcode = 'check_violation';
  end if;
  if st.status <> 'READY' then
    raise exception 'payout line %: seller transaction % is %, not READY', new.id, new.seller_transaction_id, st.status using errcode = 'check_violation';
  end if;
  select coalesce(sum(amount_in_cents), 0) into carried from payout_line where payout_id = new.payout_id;
  if carried <> po.amount_in_cents then
    raise exception 'payout % carries % cents in its lines, not its amount of %', new.payout_id, carried, po.amount_in_cents using errcode = 'check_violation';
  end if;
  select coalesce(sum(l.amount_in_cents), 0) into live from payout_line l join payout p on p.id = l.payout_id
   where l.seller_transaction_id = new.seller_transaction_id and p.status <> 'FAILED';
  if live > st.net_amount_in_cents then
    raise exception 'seller transaction % is in live payouts for % cents, more than its net of %', new.seller_transaction_id, live, st.net_amount_in_cents
      using errcode = 'check_violation';
  end if;
  return null;
end $$;`);
    this.addSql(`create function payout_line_refuse_update() returns trigger language plpgsql as $$
begin
  raise exception 'payout lines are never changed: % on % refused', tg_op, tg_table_name using errcode = 'restrict_violation';
end $$;`);

    this.addSql(`create trigger "payout_status_transition" before update on "payout" for each row execute function payout_status_transition();`);
    this.addSql(`create constraint trigger "payout_line_check" after insert on "payout_line" deferrable initially deferred for each row execute function payout_line_check();`);
    this.addSql(`create trigger "payout_line_append_only" before update on "payout_line" for each row execute function payout_line_refuse_update();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "payout_status_transition" on "payout";`);
    this.addSql(`drop table if exists "payout_line" cascade;`);
    this.addSql(`drop function if exists payout_status_transition();`);
    this.addSql(`drop function if exists payout_line_check();`);
    this.addSql(`drop function if exists payout_line_refuse_update();`);
  }
}
