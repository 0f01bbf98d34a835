import { Migration } from '@mikro-orm/migrations';

/**
 * A payout configuration's maximum is positive or null (no maximum): a maximum of 0 was accepted, and every run of
 * that territory then failed (no payout can be at most 0) and, scheduled, stopped the territories after it. Such a
 * configuration could never have paid anything; it becomes "no maximum", the one reading under which its territory's
 * payouts run at all.
 */
export class Migration20261128120000 extends Migration {
  override name = 'Migration20261128120000';

  override up(): void | Promise<void> {
    this.addSql(`update "payout_config" set "maximum_payout_amount_in_cents" = null where "maximum_payout_amount_in_cents" = 0;`);
    this.addSql(`alter table "payout_config" drop constraint "payout_config_amounts_check";`);
    this.addSql(
      `alter table "payout_config" add constraint "payout_config_amounts_check" check (minimum_payout_amount_in_cents >= 0 and (maximum_payout_amount_in_cents is null or (maximum_payout_amount_in_cents > 0 and maximum_payout_amount_in_cents >= minimum_payout_amount_in_cents)));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "payout_config" drop constraint "payout_config_amounts_check";`);
    this.addSql(
      `alter table "payout_config" add constraint "payout_config_amounts_check" check (minimum_payout_amount_in_cents >= 0 and (maximum_payout_amount_in_cents is null or maximum_payout_amount_in_cents >= minimum_payout_amount_in_cents));`,
    );
  }
}
