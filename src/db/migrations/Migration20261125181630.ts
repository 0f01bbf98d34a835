import { Migration } from '@mikro-orm/migrations';

const ACTIVE = `where status = 'ACTIVE'`;
const COLUMNS = ['name', 'city', 'state'] as const;
const expression = (column: string) => `(lower(public.f_unaccent("${column}")) collate "C")`;

/**
 * Territory search (issue 14): the search keys are stored on the row (generated columns `name_key`, `city_key`,
 * `state_key`, the same `lower(public.f_unaccent(col))` in collation "C" the expression indexes of
 * Migration20261125160000 held), and the search indexes are rebuilt on those columns under the same names. A row a
 * trigram lookup returns is rechecked against its stored keys instead of calling f_unaccent again (a broad "anywhere"
 * term rechecked thousands of rows: tens of ms), and the planner has the keys' column statistics, so the extended
 * statistics on the expressions go. Written by hand: the schema diff does not compare the definitions of expression
 * indexes. Adding the columns rewrites the table once (seconds at 100k rows).
 */
export class Migration20261125181630 extends Migration {
  override name = 'Migration20261125181630';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "territory" ${COLUMNS.map((c) => `add "${c}_key" text collate "C" generated always as (lower(public.f_unaccent(${c}))) stored not null`).join(', ')};`,
    );
    this.addSql(`drop statistics if exists "territory_search_key_stats";`);
    for (const column of COLUMNS) {
      this.addSql(`drop index if exists "territory_active_${column}_key_idx";`);
      this.addSql(`drop index if exists "territory_active_${column}_key_trgm_idx";`);
    }
    this.addSql(`create index "territory_active_name_key_idx" on "territory" ("name_key", "id", "city_key", "state_key") ${ACTIVE};`);
    this.addSql(`create index "territory_active_city_key_idx" on "territory" ("city_key", "name_key", "id", "state_key") ${ACTIVE};`);
    this.addSql(`create index "territory_active_state_key_idx" on "territory" ("state_key", "name_key", "id", "city_key") ${ACTIVE};`);
    for (const column of COLUMNS) {
      this.addSql(`create index "territory_active_${column}_key_trgm_idx" on "territory" using gin ("${column}_key" gin_trgm_ops) ${ACTIVE};`);
    }
    this.addSql(`analyze "territory";`);
  }

  override down(): void | Promise<void> {
    // Dropping the columns drops their indexes; the expression indexes come back as Migration20261125160000 made them.
    this.addSql(`alter table "territory" ${COLUMNS.map((c) => `drop column "${c}_key"`).join(', ')};`);
    const [name, city, state] = COLUMNS.map(expression) as [string, string, string];
    this.addSql(`create index "territory_active_name_key_idx" on "territory" (${name}, "id", ${city}, ${state}) include ("name", "city", "state") ${ACTIVE};`);
    this.addSql(`create index "territory_active_city_key_idx" on "territory" (${city}, ${name}, "id", ${state}) include ("name", "city", "state") ${ACTIVE};`);
    this.addSql(`create index "territory_active_state_key_idx" on "territory" (${state}, ${name}, "id", ${city}) include ("name", "city", "state") ${ACTIVE};`);
    for (const column of COLUMNS) {
      this.addSql(`create index "territory_active_${column}_key_trgm_idx" on "territory" using gin (${expression(column)} gin_trgm_ops) ${ACTIVE};`);
    }
    this.addSql(`create statistics "territory_search_key_stats" on ${name}, ${city}, ${state} from "territory";`);
    this.addSql(`analyze "territory";`);
  }
}
