import { z } from 'zod';
import { INQUIRY_STATUSES } from '../../entities/inquiry.entity.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zText } from '../../platform/text.js';
import { storeContact } from '../stores/stores.schemas.js';

export const INQUIRY_MESSAGE_MAX = 2000;

export const inquiryOutput = z
  .object({
    id: z.uuid(),
    itemId: z.uuid(),
    storeId: z.uuid(),
    territoryId: z.uuid(),
    fromUserId: z.uuid(),
    message: z.string(),
    status: z.enum(INQUIRY_STATUSES),
    createdAtUtc: z.iso.datetime(),
    /** The store's contact; null when it is Private (to others than its owner and curators). */
    storeContact: storeContact.nullable(),
  })
  .meta({ id: 'Inquiry' });
export type InquiryOutput = z.infer<typeof inquiryOutput>;
export const inquiryPage = pagedOutput(inquiryOutput).meta({ id: 'InquiryPage' });

export const createInquiryInput = z.object({ itemId: zId, message: zText({ max: INQUIRY_MESSAGE_MAX }) });
export type CreateInquiryInput = z.infer<typeof createInquiryInput>;

/** Optional: only this territory's inquiries (else those of every territory with the marketplace enabled). */
const filters = { territoryId: zId.optional() };
export const listInquiriesInput = z.object({ ...filters, ...skipTakeInput() });
export const pagedInquiriesInput = z.object({ ...filters, ...pageInput });
export type InquiryListFilter = { territoryId?: string | undefined };
