import { execSql } from '../../db/sql.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

/**
 * Account deletion: every upload of the user is marked deleted, which hides it at once wherever it was attached;
 * the media-cleanup job removes the bytes, as for any deleted content.
 */
export const eraseMedia: AccountEraser = async ({ em, userId, at }) => {
  await execSql(em, 'update media_asset set deleted_at_utc = ? where uploaded_by_user_id = ? and deleted_at_utc is null', [at, userId]);
};
