/**
 * The one read behind every territory access check: the territory, the caller's membership of it and whom the
 * caller blocked (every list filters them out), in one round trip. When no territory id is given, the session's
 * selection (territory_selection) names it.
 */
import type { SqlQuery } from '../db/sql.js';

export interface TerritoryAccessRow {
  /** The territory the call resolved to (null: no id given and nothing selected for the session). */
  target_id: string | null;
  id: string | null;
  name: string | null;
  status: string | null;
  enabled_flags: string[] | null;
  latitude: number | null;
  longitude: number | null;
  radius_km: number | null;
  suggested_by_user_id: string | null;
  membership_id: string | null;
  role: string | null;
  capabilities: string[] | null;
  geo_verified: boolean | null;
  document_verified: boolean | null;
  /** The end of the caller's current posting restriction here (moderation sanction), if any. */
  posting_restricted_until: Date | null;
  /** The users the caller blocked (null: none, or no caller). */
  blocked_user_ids: string[] | null;
  /** Whether the caller has HIDDEN posts in the territory; read only when asked (`ownHiddenPosts`), false otherwise. */
  has_own_hidden_posts: boolean;
}

/**
 * `ownHiddenPosts`: also whether the caller has HIDDEN posts there (the feed: only they read its hidden branch), a
 * probe of `post_hidden_author_idx`; one statement either way (the flag is a parameter, the probe runs when it is set).
 */
export function territoryAccessQuery(territoryId: string | null, userId: string | null, sessionId: string | null, ownHiddenPosts = false): SqlQuery {
  return {
    sql: `with target as (
            select coalesce(?::uuid, (select s.territory_id from territory_selection s where s.user_id = ?::uuid and s.session_id = ?)) as id
          )
          select target.id as target_id, t.id, t.name, t.status, t.enabled_flags, t.latitude, t.longitude, t.radius_km, t.suggested_by_user_id,
                 m.id as membership_id, m.role, m.capabilities,
                 m.geo_verified_at_utc is not null as geo_verified, m.document_verified_at_utc is not null as document_verified,
                 (select max(r.ends_at_utc) from posting_restriction r
                   where r.user_id = ?::uuid and r.territory_id = t.id and r.ends_at_utc > now()) as posting_restricted_until,
                 (select array_agg(b.blocked_user_id) from user_block b where b.blocker_user_id = ?::uuid) as blocked_user_ids,
                 case when ?::boolean then exists (select 1 from post p where p.author_user_id = ?::uuid and p.territory_id = t.id and p.status = 'HIDDEN')
                      else false end as has_own_hidden_posts
            from target
            left join territory t on t.id = target.id
            left join territory_membership m on m.territory_id = t.id and m.user_id = ?::uuid`,
    params: [territoryId, userId, sessionId, userId, userId, ownHiddenPosts, userId, userId],
  };
}
