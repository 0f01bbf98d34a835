import { router } from '../trpc/init.js';
import { accessRouter } from './access/access.router.js';
import { authRouter } from './auth/auth.router.js';
import { usersRouter } from './users/users.router.js';
import { territoriesRouter } from './territories/territories.router.js';
import { interestsRouter } from './interests/interests.router.js';
import { mediaPreferencesRouter } from './media-preferences/media-preferences.router.js';
import { preferencesRouter } from './preferences/preferences.router.js';
import { systemConfigRouter } from './system-config/system-config.router.js';
import { jobsRouter } from './jobs/jobs.router.js';
import { verificationRouter } from './verification/verification.router.js';
import { workItemsRouter } from './work-items/work-items.router.js';
import { membershipsRouter } from './memberships/memberships.router.js';
import { joinRequestsRouter } from './join-requests/join-requests.router.js';
import { territoryWorkItemsRouter } from './territory-work-items/territory-work-items.router.js';
import { notificationsRouter } from './notifications/notifications.router.js';
import { mediaRouter } from './media/media.router.js';
import { mediaConfigRouter } from './media-config/media-config.router.js';
import { blocksRouter } from './blocks/blocks.router.js';
import { eventsRouter } from './events/events.router.js';
import { alertsRouter } from './alerts/alerts.router.js';
import { feedRouter } from './feed/feed.router.js';
import { mapRouter } from './map/map.router.js';
import { assetsRouter } from './assets/assets.router.js';
import { naturalAssetsRouter } from './natural-assets/natural-assets.router.js';

/** The whole API: every domain router. Its type is what the client SDK imports. */
export const appRouter = router({
  auth: authRouter,
  users: usersRouter,
  access: accessRouter,
  territories: territoriesRouter,
  preferences: preferencesRouter,
  mediaPreferences: mediaPreferencesRouter,
  interests: interestsRouter,
  systemConfig: systemConfigRouter,
  workItems: workItemsRouter,
  verification: verificationRouter,
  jobs: jobsRouter,
  memberships: membershipsRouter,
  joinRequests: joinRequestsRouter,
  territoryWorkItems: territoryWorkItemsRouter,
  notifications: notificationsRouter,
  media: mediaRouter,
  mediaConfig: mediaConfigRouter,
  blocks: blocksRouter,
  events: eventsRouter,
  alerts: alertsRouter,
  feed: feedRouter,
  map: mapRouter,
  assets: assetsRouter,
  naturalAssets: naturalAssetsRouter,
});

export type AppRouter = typeof appRouter;
