import { execSql } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import type { NotificationsInput, PreferencesOutput, PrivacyInput } from './preferences.schemas.js';
import { ensurePreferences, flagsOf, PREFERENCES_COLUMNS, type PreferencesRow } from './preferences.queries.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

function toOutput(row: PreferencesRow): PreferencesOutput {
  return {
    userId: row.user_id,
    profileVisibility: row.profile_visibility,
    contactVisibility: row.contact_visibility,
    shareLocation: row.share_location,
    showMemberships: row.show_memberships,
    notifications: flagsOf(row.notifications),
    updatedAtUtc: row.updated_at_utc,
  };
}

/** The caller's preferences; the first read creates the row with the defaults. */
export async function getPreferences(ctx: ServiceContext) {
  return toOutput(await ensurePreferences(ctx, ctx.user.id));
}

/** Replaces the four privacy settings (creating the row when absent). */
export async function updatePrivacy(ctx: ServiceContext, input: PrivacyInput) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const rows = await execSql<PreferencesRow>(
    em,
    `insert into user_preferences (user_id, created_at_utc, updated_at_utc, profile_visibility, contact_visibility, share_location, show_memberships)
     values (?, now(), now(), ?, ?, ?, ?)
     on conflict (user_id) do update set
       profile_visibility = excluded.profile_visibility,
       contact_visibility = excluded.contact_visibility,
       share_location = excluded.share_location,
       show_memberships = excluded.show_memberships,
       updated_at_utc = excluded.updated_at_utc
     returning ${PREFERENCES_COLUMNS}`,
    [userId, input.profileVisibility, input.contactVisibility, input.shareLocation, input.showMemberships],
  );
  return toOutput(rows[0] as PreferencesRow);
}

/** Sets the given flags and keeps the others; merged in the database so concurrent partial updates both apply. */
export async function updateNotifications(ctx: ServiceContext, input: NotificationsInput) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const changes = Object.fromEntries(Object.entries(input).filter(([, value]) => typeof value === 'boolean'));
  const rows = await execSql<PreferencesRow>(
    em,
    `insert into user_preferences (user_id, created_at_utc, updated_at_utc, notifications)
     values (?, now(), now(), ?::jsonb)
     on conflict (user_id) do update set
       notifications = user_preferences.notifications || excluded.notifications,
       updated_at_utc = excluded.updated_at_utc
     returning ${PREFERENCES_COLUMNS}`,
    [userId, JSON.stringify(changes)],
  );
  return toOutput(rows[0] as PreferencesRow);
}

/** Account deletion: the privacy and notification preferences go. */
export const erasePreferences: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from user_preferences where user_id = ?', [userId]);
};
