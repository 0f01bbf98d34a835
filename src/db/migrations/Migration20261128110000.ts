import { Migration } from '@mikro-orm/migrations';

/**
 * A payout's lines were summed once per line at commit (`payout_line_check`): a payout of n lines read n^2 lines, so
 * a busy seller's payout of 10,000 sales held its claim transaction for seconds (bench:payouts "busy seller"). Now
 * each line carries `seq`, its number in the order its transaction took the payout's row lock (a BEFORE INSERT
 * trigger locks the payout, then numbers the line; the lock is held to commit, so a later writer's lines number
 * after all of an earlier one's), and only a payout's last line (no greater `seq`) sums the lines. At any point the
 * checks run (commit, or `set constraints ... immediate`), the last line inserted so far is the last of all, so the
 * sum is checked once over every line and again whenever a line is added later, as before. Checked there too: the
 * payout's `transaction_ids` are exactly its lines' transactions (the list the API shows beside the lines), and
 * `payout_status_transition` keeps them unchanged like the amount.
 */
export class Migration20261128110000 extends Migration {
  override name = 'Migration20261128110000';

  override up(): void | Promise<void> {
    this.addSql(`create sequence "payout_line_seq_seq";`);
    // The existing lines were each checked at their commit: any order numbers them.
    this.addSql(`alter table "payout_line" add column "seq" bigint not null default nextval('payout_line_seq_seq');`);
    this.addSql(`alter table "payout_line" alter column "seq" drop default;`);
    this.addSql(`alter sequence "payout_line_seq_seq" owned by "payout_line"."seq";`);
    this.addSql(`create index "payout_line_payout_seq_index" on "payout_line" ("payout_id", "seq");`);
    this.addSql(`create function payout_line_number() returns trigger language plpgsql as $$
begin
  -- The payout's row lock first: lines of one payout are numbered in the order their transactions commit.
  perform 1 from payout where id = new.payout_id for no key update;
  new.seq := nextval('payout_line_seq_seq');
  return new;
end $$;`);
    this.addSql(`create trigger "payout_line_number" before insert on "payout_line" for each row execute function payout_line_number();`);
    this.addSql(`create or replace function payout_status_transition() returns trigger language plpgsql as $$
begin
  if new.status is distinct from old.status and not (
       (old.status = 'PENDING' and new.status = 'PROCESSING')
    or (old.status = 'PROCESSING' and new.status in ('COMPLETED', 'FAILED'))) then
    raise exception 'a payout cannot move from % to %', old.status, new.status using errcode = 'check_violation';
  end if;
  if (new.amount_in_cents, new.seller_user_id, new.territory_id, new.currency, new.transaction_ids)
     is distinct from (old.amount_in_cents, old.seller_user_id, old.territory_id, old.currency, old.transaction_ids) then
    raise exception 'payout %: its amount, seller, territory, currency and transactions are never changed', old.id using errcode = 'restrict_violation';
  end if;
  return new;
end $$;`);
    this.addSql(`create or replace function payout_line_check() returns trigger language plpgsql as $$
declare
  po record;
  st record;
  carried bigint;
  carried_ids uuid[];
  live bigint;
begin
  select territory_id, seller_user_id, currency, amount_in_cents, transaction_ids into po from payout where id = new.payout_id;
  -- The transaction's row lock puts this check after any other writer of its lines has committed (the claim holds it already).
  select territory_id, seller_user_id, currency, net_amount_in_cents, status into st from seller_transaction where id = new.seller_transaction_id for update;
  if (po.territory_id, po.seller_user_id, po.currency) is distinct from (st.territory_id, st.seller_user_id, st.currency) then
    raise exception 'payout line %: payout % and seller transaction % are of different sellers, territories or currencies', new.id, new.payout_id, new.seller_transaction_id
      using errcode = 'check_violation';
  end if;
  if st.status <> 'READY' then
    raise exception 'payout line %: seller transaction % is %, not READY', new.id, new.seller_transaction_id, st.status using errcode = 'check_violation';
  end if;
  -- Once per payout: by its last line (payout_line_number).
  if not exists (select 1 from payout_line where payout_id = new.payout_id and seq > new.seq) then
    select coalesce(sum(amount_in_cents), 0), array_agg(seller_transaction_id order by seller_transaction_id) into carried, carried_ids
      from payout_line where payout_id = new.payout_id;
    if carried <> po.amount_in_cents then
      raise exception 'payout % carries % cents in its lines, not its amount of %', new.payout_id, carried, po.amount_in_cents using errcode = 'check_violation';
    end if;
    if carried_ids is distinct from (select array_agg(t.id order by t.id) from unnest(po.transaction_ids::uuid[]) as t(id)) then
      raise exception 'payout %: its transaction_ids are not the transactions of its lines', new.payout_id using errcode = 'check_violation';
    end if;
  end if;
  select coalesce(sum(l.amount_in_cents), 0) into live from payout_line l join payout p on p.id = l.payout_id
   where l.seller_transaction_id = new.seller_transaction_id and p.status <> 'FAILED';
  if live > st.net_amount_in_cents then
    raise exception 'seller transaction % is in live payouts for % cents, more than its net of %', new.seller_transaction_id, live, st.net_amount_in_cents
      using errcode = 'check_violation';
  end if;
  return null;
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create or replace function payout_status_transition() returns trigger language plpgsql as $$
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
    this.addSql(`drop trigger if exists "payout_line_number" on "payout_line";`);
    this.addSql(`drop function if exists payout_line_number();`);
    this.addSql(`drop index if exists "payout_line_payout_seq_index";`);
    this.addSql(`alter table "payout_line" drop column if exists "seq";`);
    this.addSql(`create or replace function payout_line_check() returns trigger language plpgsql as $$
declare
  po record;
  st record;
  carried bigint;
  live bigint;
begin
  select territory_id, seller_user_id, currency, amount_in_cents into po from payout where id = new.payout_id;
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
  }
}
