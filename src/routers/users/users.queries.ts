/** SQL of the caller's own profile (`GET /api/v1/users/me`), read on every app start. */
import type { SqlQuery } from '../../db/sql.js';
import type { IdentityVerificationStatus, SystemPermission } from '../../entities/user.entity.js';

export interface MeRow {
  id: string;
  display_name: string;
  email: string | null;
  identity_verification_status: IdentityVerificationStatus;
  two_factor_enabled: boolean;
  permissions: SystemPermission[];
}

/** The user (not deleted) with their system permissions in name order: one key lookup, prepared by its reader. */
export function meQuery(userId: string): SqlQuery {
  return {
    sql: `select u.id, u.display_name, u.email, u.identity_verification_status, u.two_factor_enabled,
                 array(select p.permission from user_permission p where p.user_id = u.id order by p.permission) as permissions
            from app_user u where u.id = ?::uuid and u.deleted_at_utc is null`,
    params: [userId],
  };
}
