import type { TRPCBuiltRouter, TRPCDecorateCreateRouterOptions } from '@trpc/server';
import type { RootTypes } from '../trpc/root-types.js';
import { router } from '../trpc/init.js';
import { registerAccountEraser } from '../platform/account-erasure.js';
import { erasePermissions } from './access/access.service.js';
import { eraseSessionsAndFactors } from './auth/sessions.service.js';
import { eraseBlocks } from './blocks/blocks.service.js';
import { canSeeChatMessage, eraseChatParticipation } from './chat/chat.service.js';
import { eraseParticipations } from './events/events.service.js';
import { eraseEvidence } from './evidence/evidence-erasure.js';
import { eraseInterests } from './interests/interests.service.js';
import { eraseJoinRequests } from './join-requests/join-requests.service.js';
import { eraseMedia } from './media/media-erasure.js';
import { eraseMediaPreferences } from './media-preferences/media-preferences.service.js';
import { eraseMemberships } from './memberships/memberships.service.js';
import { eraseNotifications } from './notifications/notifications.service.js';
import { erasePreferences } from './preferences/preferences.service.js';
import { eraseTerritorySelections } from './territories/territories.service.js';
import { eraseWorkItems } from './work-items/work-items.service.js';
import { assetCurationHandler } from './assets/asset-curation.js';
import { canSeeEvent } from './events/events.queries.js';
import { canSeePost } from './feed/feed.service.js';
import { registerMediaReaders } from './media/media-access.js';
import { residencyVerificationHandler } from './memberships/residency-decision.js';
import { territorySuggestionHandler } from './territories/territory-suggestion.js';
import { identityVerificationHandler } from './verification/identity-decision.js';
import { registerWorkItemHandlers } from './work-items/work-item-handlers.js';
import { accessRouter } from './access/access.router.js';
import { clientsRouter } from './clients/clients.router.js';
import { journeysRouter } from './journeys/journeys.router.js';
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
import { residencyRequestProcedures } from './join-requests/residency-requests.router.js';
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
import { chatRouter } from './chat/chat.router.js';
import { storesRouter } from './stores/stores.router.js';
import { eraseStores } from './stores/stores.service.js';
import { itemsRouter } from './items/items.router.js';
import { eraseItems } from './items/items.service.js';
import { inquiriesRouter } from './inquiries/inquiries.router.js';
import { platformFeesRouter } from './platform-fees/platform-fees.router.js';
import { payoutsRouter } from './payouts/payouts.router.js';
import { financeRouter } from './finance/finance.router.js';
import { walletsRouter } from './wallets/wallets.router.js';
import { merchantsRouter } from './merchants/merchants.router.js';
import { fiscalRouter } from './fiscal/fiscal.router.js';
import { cartRouter } from './cart/cart.router.js';
import { eraseCarts } from './cart/cart.service.js';
import { checkoutsRouter } from './checkouts/checkouts.router.js';
import { registerReportedRefundHandler } from './checkouts/payments.service.js';
import { applyReportedRefund } from './payouts/refunds.service.js';
import { canSeeItem } from './items/items.queries.js';
import { moderationCaseHandler } from './reports/moderation-case.js';
import { reportsRouter } from './reports/reports.router.js';
import { moderationRulesRouter } from './moderation-rules/moderation-rules.router.js';
import { votingsRouter } from './votings/votings.router.js';
import { eraseVotes } from './votings/votings.service.js';
import { governanceRouter } from './governance/governance.router.js';
import { eraseReports } from './reports/reports.service.js';

// Account deletion: each domain erases its own data of the user (src/platform/account-erasure.ts).
registerAccountEraser('sessions', eraseSessionsAndFactors);
registerAccountEraser('permissions', erasePermissions);
registerAccountEraser('preferences', erasePreferences);
registerAccountEraser('media-preferences', eraseMediaPreferences);
registerAccountEraser('interests', eraseInterests);
registerAccountEraser('blocks', eraseBlocks);
registerAccountEraser('memberships', eraseMemberships);
registerAccountEraser('territory-selections', eraseTerritorySelections);
registerAccountEraser('notifications', eraseNotifications);
registerAccountEraser('join-requests', eraseJoinRequests);
registerAccountEraser('work-items', eraseWorkItems);
registerAccountEraser('event-participations', eraseParticipations);
registerAccountEraser('evidence', eraseEvidence);
registerAccountEraser('media', eraseMedia);
registerAccountEraser('chat', eraseChatParticipation);
registerAccountEraser('reports', eraseReports);
registerAccountEraser('votes', eraseVotes);
registerAccountEraser('stores', eraseStores);
registerAccountEraser('items', eraseItems);
registerAccountEraser('carts', eraseCarts);

// A refund the payment gateway reports: the payouts domain reverses the sale (the checkouts module imports none of it).
registerReportedRefundHandler(applyReportedRefund);

// Each domain's effect of completing its work items (the work-items module imports none of them).
registerWorkItemHandlers({
  IDENTITY_VERIFICATION: identityVerificationHandler,
  TERRITORY_SUGGESTION: territorySuggestionHandler,
  RESIDENCY_VERIFICATION: residencyVerificationHandler,
  ASSET_CURATION: assetCurationHandler,
  MODERATION_CASE: moderationCaseHandler,
});

// Who may see media attached to each kind of content (the media module imports none of them).
registerMediaReaders({ POST: canSeePost, EVENT: canSeeEvent });
registerMediaReaders({ CHAT_MESSAGE: canSeeChatMessage });
registerMediaReaders({ ITEM: canSeeItem });

/**
 * The whole API: every domain router. Its type is what the client SDK imports. The routers are listed in three named
 * groups and the type of `appRouter` is written from their names: inferred whole, it is too long for TypeScript's
 * declaration emit (TS7056), which the SDK's bundled `.d.ts` needs.
 */
const platformRouters = {
  auth: authRouter,
  users: usersRouter,
  access: accessRouter,
  clients: clientsRouter,
  journeys: journeysRouter,
  territories: territoriesRouter,
  preferences: preferencesRouter,
  mediaPreferences: mediaPreferencesRouter,
  interests: interestsRouter,
  systemConfig: systemConfigRouter,
  workItems: workItemsRouter,
  verification: verificationRouter,
  jobs: jobsRouter,
  memberships: membershipsRouter(residencyRequestProcedures),
  joinRequests: joinRequestsRouter,
  territoryWorkItems: territoryWorkItemsRouter,
  notifications: notificationsRouter,
  media: mediaRouter,
  mediaConfig: mediaConfigRouter,
  blocks: blocksRouter,
};
const communityRouters = {
  events: eventsRouter,
  alerts: alertsRouter,
  feed: feedRouter,
  map: mapRouter,
  assets: assetsRouter,
  naturalAssets: naturalAssetsRouter,
  chat: chatRouter,
  reports: reportsRouter,
  moderationRules: moderationRulesRouter,
  votings: votingsRouter,
  governance: governanceRouter,
};
const marketplaceRouters = {
  stores: storesRouter,
  items: itemsRouter,
  inquiries: inquiriesRouter,
  platformFees: platformFeesRouter,
  payouts: payoutsRouter,
  finance: financeRouter,
  wallets: walletsRouter,
  merchants: merchantsRouter,
  fiscal: fiscalRouter,
  cart: cartRouter,
  checkouts: checkoutsRouter,
};

export const appRouter: TRPCBuiltRouter<
  RootTypes,
  TRPCDecorateCreateRouterOptions<typeof platformRouters & typeof communityRouters & typeof marketplaceRouters>
> = router({ ...platformRouters, ...communityRouters, ...marketplaceRouters });

export type AppRouter = typeof appRouter;
