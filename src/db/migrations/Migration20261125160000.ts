import { Migration } from '@mikro-orm/migrations';

const ACTIVE = `where status = 'ACTIVE'`;
const key = (column: string) => `(lower(public.f_unaccent("${column}")) collate "C")`;

/**
 * Accent-insensitive territory search (issue 14, target 4): `sao paulo` finds "São Paulo".
 *
 * `unaccent()` is only STABLE (its dictionary could change), so it cannot be indexed; `public.f_unaccent` is the
 * usual immutable wrapper, schema-qualified (dictionary included) so it never depends on search_path. Two
 * deliberate departures from the textbook declaration:
 * - PARALLEL UNSAFE: a search reads a few index entries (well under a millisecond); a parallel plan's worker
 *   start-up costs several, and a worker was launched even for a bucket a one-time filter skips.
 * - COST 1: the search reads the keys from its covering indexes (index-only scans) instead of computing them; at the
 *   default cost (100) the planner charges each filter on a stored key as a hundred operator calls and picks plans
 *   that recompute the function on thousands of rows instead (measured: 40 ms instead of 3 ms for a q+city+state
 *   count on 100k rows).
 *
 * The search keys are indexed as the Territory entity declares them (the old raw-column trigram and lower() prefix
 * indexes go), and extended statistics on the three key expressions give the planner their distributions: the
 * indexes are partial (ACTIVE), and PostgreSQL keeps no statistics for the expressions of partial indexes.
 */
export class Migration20261125160000 extends Migration {
  override name = 'Migration20261125160000';

  override up(): void | Promise<void> {
    this.addSql(`create extension if not exists unaccent with schema public;`);
    this.addSql(`create function public.f_unaccent(value text) returns text language sql immutable strict parallel unsafe cost 1
      return public.unaccent('public.unaccent'::regdictionary, value);`);
    for (const column of ['name', 'city', 'state']) {
      this.addSql(`drop index if exists "territory_active_${column}_trgm_idx";`);
      this.addSql(`drop index if exists "territory_active_${column}_prefix_idx";`);
    }
    this.addSql(`create index "territory_active_name_key_idx" on "territory" (${key('name')}, "id", ${key('city')}, ${key('state')}) include ("name", "city", "state") ${ACTIVE};`);
    this.addSql(`create index "territory_active_city_key_idx" on "territory" (${key('city')}, ${key('name')}, "id", ${key('state')}) include ("name", "city", "state") ${ACTIVE};`);
    this.addSql(`create index "territory_active_state_key_idx" on "territory" (${key('state')}, ${key('name')}, "id", ${key('city')}) include ("name", "city", "state") ${ACTIVE};`);
    for (const column of ['name', 'city', 'state']) {
      this.addSql(`create index "territory_active_${column}_key_trgm_idx" on "territory" using gin (${key(column)} gin_trgm_ops) ${ACTIVE};`);
    }
    this.addSql(`create statistics "territory_search_key_stats" on ${key('name')}, ${key('city')}, ${key('state')} from "territory";`);
    this.addSql(`analyze "territory";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop statistics if exists "territory_search_key_stats";`);
    for (const name of ['name_key', 'city_key', 'state_key', 'name_key_trgm', 'city_key_trgm', 'state_key_trgm']) {
      this.addSql(`drop index if exists "territory_active_${name}_idx";`);
    }
    for (const column of ['name', 'city', 'state']) {
      this.addSql(`create index "territory_active_${column}_trgm_idx" on "territory" using gin ("${column}" gin_trgm_ops) ${ACTIVE};`);
      this.addSql(`create index "territory_active_${column}_prefix_idx" on "territory" (lower("${column}") text_pattern_ops) ${ACTIVE};`);
    }
    this.addSql(`drop function public.f_unaccent(text);`);
  }
}
