import { Migration } from '@mikro-orm/migrations';

/**
 * Territories nearby (issue 14): the GiST index of the nearby prefilter includes the coordinates, so the KNN scan that
 * bounds a dense area's answer (territories.queries.ts `nearbyQuery`) computes its distances from the index alone
 * (index-only scan) instead of fetching a heap row per entry. Written by hand: the schema diff does not compare the
 * definitions of expression indexes.
 */
export class Migration20261125173600 extends Migration {
  override name = 'Migration20261125173600';

  override up(): void | Promise<void> {
    this.addSql(`drop index if exists "territory_active_geo_idx";`);
    this.addSql(
      `create index "territory_active_geo_idx" on "territory" using gist (point("longitude", "latitude")) include ("latitude", "longitude") where status = 'ACTIVE';`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "territory_active_geo_idx";`);
    this.addSql(`create index "territory_active_geo_idx" on "territory" using gist (point("longitude", "latitude")) where status = 'ACTIVE';`);
  }
}
