import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { createInquiryInput, inquiryOutput, inquiryPage, listInquiriesInput, pagedInquiriesInput } from './inquiries.schemas.js';
import * as inquiries from './inquiries.service.js';

const TAGS = ['Marketplace'];

export const inquiriesRouter = router({
  create: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/items/{itemId}/inquiries', tags: TAGS, summary: "Ask about an item (OPEN; the store's owner is notified)" },
      successStatus: 201,
    })
    .input(createInquiryInput)
    .output(inquiryOutput)
    // No Location: an inquiry has no path of its own (it is read through the lists).
    .mutation(({ ctx, input }) => inquiries.createInquiry(ctx, input)),

  mine: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/inquiries/me', tags: TAGS, summary: 'Inquiries I sent, newest first' } })
    .input(listInquiriesInput)
    .output(z.array(inquiryOutput))
    .query(({ ctx, input }) => inquiries.listMyInquiries(ctx, input)),

  minePaged: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/inquiries/me/paged', tags: TAGS, summary: 'Inquiries I sent (paged)' } })
    .input(pagedInquiriesInput)
    .output(inquiryPage)
    .query(({ ctx, input }) => inquiries.pageMyInquiries(ctx, input)),

  received: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/inquiries/received', tags: TAGS, summary: 'Inquiries to my stores, newest first' } })
    .input(listInquiriesInput)
    .output(z.array(inquiryOutput))
    .query(({ ctx, input }) => inquiries.listReceivedInquiries(ctx, input)),

  receivedPaged: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/inquiries/received/paged', tags: TAGS, summary: 'Inquiries to my stores (paged)' } })
    .input(pagedInquiriesInput)
    .output(inquiryPage)
    .query(({ ctx, input }) => inquiries.pageReceivedInquiries(ctx, input)),
});
