import { runHotRead, runSql } from '../../db/sql.js';
import { Inquiry } from '../../entities/inquiry.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { badRequest, conflict, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { itemFacts } from '../items/items.queries.js';
import { enqueueNotification } from '../notifications/outbox.js';
import { inquiriesCountQuery, inquiriesQuery, inquiryByIdQuery, type InquiryListKind, type InquiryRow } from './inquiries.queries.js';
import type { CreateInquiryInput, InquiryListFilter, InquiryOutput } from './inquiries.schemas.js';

const MARKETPLACE = 'MARKETPLACEENABLED' as const;

/** The store's contact: its owner always sees it; others only when it is Public. */
function toOutput(r: InquiryRow, viewerId: string): InquiryOutput {
  const visible = r.contact_visibility === 'Public' || r.store_owner_user_id === viewerId;
  return {
    id: r.id,
    itemId: r.item_id,
    storeId: r.store_id,
    territoryId: r.territory_id,
    fromUserId: r.from_user_id,
    message: r.message,
    status: r.status,
    createdAtUtc: r.created_at_utc,
    storeContact: visible ? { phone: r.contact_phone, email: r.contact_email } : null,
  };
}

/**
 * Any signed-in user asks about an ACTIVE item (not their own store's: 400): an OPEN inquiry and an
 * INQUIRY_RECEIVED notification to the store's owner, in one transaction.
 */
export async function createInquiry(ctx: ServiceContext, input: CreateInquiryInput): Promise<InquiryOutput> {
  const item = await itemFacts(ctx.em, input.itemId);
  if (!item) throw notFound('Item');
  await requireTerritory(ctx, item.territoryId, { flag: MARKETPLACE });
  const { em, user } = ctx;
  if (item.storeOwnerUserId === user.id) throw badRequest('You cannot send an inquiry about your own item.', 'CANNOT_INQUIRE_OWN_ITEM');
  if (item.status !== 'ACTIVE') throw conflict('The item is archived.', 'ITEM_ARCHIVED');
  const id = newId();
  await em.transactional(async (tx) => {
    tx.create(Inquiry, {
      id,
      createdAtUtc: ctx.clock.now(),
      territoryId: item.territoryId,
      itemId: item.id,
      storeId: item.storeId,
      fromUserId: user.id,
      message: input.message,
      status: 'OPEN',
    });
    enqueueNotification(tx, {
      type: 'INQUIRY_RECEIVED',
      recipientUserIds: [item.storeOwnerUserId],
      title: `New inquiry about ${item.title}`,
      body: input.message,
      data: { territoryId: item.territoryId, storeId: item.storeId, itemId: item.id, inquiryId: id },
      sourceKey: `inquiry:${id}:received`,
    });
    await tx.flush();
  });
  const [row] = await runSql<InquiryRow>(em, inquiryByIdQuery(id));
  return toOutput(row!, user.id);
}

/** The territory filter, when given, is a marketplace operation there (404 when unknown or disabled). */
async function territoryFilter(ctx: ServiceContext, filter: InquiryListFilter): Promise<string | undefined> {
  if (!filter.territoryId) return undefined;
  return (await requireTerritory(ctx, filter.territoryId, { flag: MARKETPLACE })).territoryId;
}

async function list(ctx: ServiceContext, kind: InquiryListKind, input: InquiryListFilter & { skip: number; take: number }) {
  const territoryId = await territoryFilter(ctx, input);
  const rows = await runHotRead<InquiryRow>(ctx, inquiriesQuery(kind, ctx.user.id, territoryId, input.skip, input.take));
  return rows.map((r) => toOutput(r, ctx.user.id));
}

async function page(ctx: ServiceContext, kind: InquiryListKind, input: InquiryListFilter & { pageNumber: number; pageSize: number }) {
  const territoryId = await territoryFilter(ctx, input);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [rows, count] = await Promise.all([
    runHotRead<InquiryRow>(ctx, inquiriesQuery(kind, ctx.user.id, territoryId, offset, limit)),
    runHotRead<{ total: number }>(ctx, inquiriesCountQuery(kind, ctx.user.id, territoryId)),
  ]);
  return toPage(
    rows.map((r) => toOutput(r, ctx.user.id)),
    count[0]?.total ?? 0,
    input.pageNumber,
    input.pageSize,
  );
}

/** The caller's own inquiries, newest first. */
export const listMyInquiries = (ctx: ServiceContext, input: InquiryListFilter & { skip: number; take: number }) => list(ctx, 'sent', input);
export const pageMyInquiries = (ctx: ServiceContext, input: InquiryListFilter & { pageNumber: number; pageSize: number }) => page(ctx, 'sent', input);
/** Inquiries to the caller's stores, newest first. */
export const listReceivedInquiries = (ctx: ServiceContext, input: InquiryListFilter & { skip: number; take: number }) => list(ctx, 'received', input);
export const pageReceivedInquiries = (ctx: ServiceContext, input: InquiryListFilter & { pageNumber: number; pageSize: number }) => page(ctx, 'received', input);
