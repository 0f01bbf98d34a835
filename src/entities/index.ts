// Every entity the ORM knows; migrations are generated from this list.
import { Alert } from './alert.entity.js';
import { AssetValidation, TerritoryAsset } from './asset.entity.js';
import { AuditEntry } from './audit.entity.js';
import { ChatConversation, ChatMessage, ChatParticipant } from './chat.entity.js';
import { UserBlock } from './block.entity.js';
import { CredentialAttempt, RecoveryCode, RefreshToken, TwoFactorChallenge } from './auth.entity.js';
import { Event, EventParticipation } from './event.entity.js';
import { Evidence } from './evidence.entity.js';
import { JoinRequest, JoinRequestRecipient } from './join-request.entity.js';
import { MediaAsset, MediaAttachment, TerritoryMediaConfig } from './media.entity.js';
import { MapEntity, MapEntityConfirmation, MapEntityRelation, MapPinAuthorCounter, MapPinCounter, MapPinOwner } from './map.entity.js';
import { TerritoryMembership } from './membership.entity.js';
import { TerritoryModerationRule } from './moderation-rule.entity.js';
import { NaturalAsset } from './natural-asset.entity.js';
import { Notification, OutboxMessage } from './notification.entity.js';
import { Post, PostComment, PostInteractionCount, PostLike, PostShare, TerritoryAuthorPostCounter, TerritoryPostCounter } from './post.entity.js';
import { UserInterest, UserMediaPreferences, UserPreferences } from './preferences.entity.js';
import { RateLimitCounter } from './rate-limit.entity.js';
import { ClientApplication } from './client-application.entity.js';
import { SystemConfig } from './system-config.entity.js';
import { Territory, TerritorySelection, TerritoryStatusCounter } from './territory.entity.js';
import { User, UserPermission } from './user.entity.js';
import { WorkItem } from './work-item.entity.js';
import { Store } from './store.entity.js';
import { Item, StoreItemCounter } from './item.entity.js';
import { Inquiry } from './inquiry.entity.js';
import { PlatformFeeConfig } from './platform-fee.entity.js';
import { PayoutConfig } from './payout-config.entity.js';
import { Payout, PayoutLine } from './payout.entity.js';
import { LedgerAccount, LedgerEntry, LedgerTransaction } from './ledger.entity.js';
import { Cart, CartItem } from './cart.entity.js';
import { Checkout, CheckoutIdempotencyRecord, CheckoutItem, SellerTransaction } from './checkout.entity.js';
import { Payment, PaymentWebhookEvent } from './payment.entity.js';
import { FinancialTransaction, FinancialTransactionStatusChange } from './financial-transaction.entity.js';
import { PostingRestriction, Report, ReportSanction } from './report.entity.js';
import { Vote, Voting } from './voting.entity.js';
import { ConsumptionMeter, MerchantSubscription, SubscriptionPlan } from './subscription.entity.js';
import { TerritoryFiscalPack, TerritoryPaymentMethods } from './fiscal.entity.js';

export const entities = [
  User,
  UserPermission,
  RefreshToken,
  TwoFactorChallenge,
  RecoveryCode,
  CredentialAttempt,
  Territory,
  TerritoryStatusCounter,
  TerritorySelection,
  TerritoryMembership,
  WorkItem,
  Evidence,
  AuditEntry,
  JoinRequest,
  JoinRequestRecipient,
  UserPreferences,
  UserMediaPreferences,
  UserInterest,
  SystemConfig,
  RateLimitCounter,
  ClientApplication,
  OutboxMessage,
  Notification,
  MediaAsset,
  MediaAttachment,
  TerritoryMediaConfig,
  UserBlock,
  Event,
  EventParticipation,
  Alert,
  Post,
  PostInteractionCount,
  PostLike,
  PostComment,
  PostShare,
  TerritoryPostCounter,
  TerritoryAuthorPostCounter,
  TerritoryModerationRule,
  MapEntity,
  MapEntityConfirmation,
  MapEntityRelation,
  MapPinCounter,
  MapPinAuthorCounter,
  MapPinOwner,
  TerritoryAsset,
  AssetValidation,
  NaturalAsset,
  ChatConversation,
  ChatParticipant,
  ChatMessage,
  Store,
  Item,
  StoreItemCounter,
  Inquiry,
  PlatformFeeConfig,
  PayoutConfig,
  Payout,
  PayoutLine,
  LedgerAccount,
  LedgerTransaction,
  LedgerEntry,
  Cart,
  CartItem,
  Checkout,
  CheckoutItem,
  SellerTransaction,
  CheckoutIdempotencyRecord,
  Payment,
  PaymentWebhookEvent,
  FinancialTransaction,
  FinancialTransactionStatusChange,
  Report,
  ReportSanction,
  PostingRestriction,
  Voting,
  Vote,
  SubscriptionPlan,
  MerchantSubscription,
  ConsumptionMeter,
  TerritoryFiscalPack,
  TerritoryPaymentMethods,
];
