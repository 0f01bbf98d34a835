import { z } from 'zod';
import { CHECKOUT_STATUSES, PAYMENT_METHODS } from '../../entities/checkout.entity.js';
import { PAYMENT_PROVIDERS, PAYMENT_STATUSES } from '../../entities/payment.entity.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zOptionalText } from '../../platform/text.js';
import { inquiryOutput } from '../inquiries/inquiries.schemas.js';
import { lenientEnum } from '../../platform/enums.js';

export const CHECKOUT_MESSAGE_MAX = 2000;
export const IDEMPOTENCY_KEY_MAX = 255;

const cents = z.number().int();

export const paymentOutput = z
  .object({
    id: z.uuid(),
    provider: z.enum(PAYMENT_PROVIDERS),
    method: z.enum(PAYMENT_METHODS),
    status: z.enum(PAYMENT_STATUSES),
    amountInCents: cents,
    currency: z.string(),
    /** PIX: the copy-paste code to pay with. */
    pixCopyPasteCode: z.string().nullable(),
    /** CARD: what the client confirms the card payment with. */
    clientSecret: z.string().nullable(),
  })
  .meta({ id: 'Payment' });

export const checkoutItemOutput = z
  .object({
    itemId: z.uuid(),
    titleSnapshot: z.string(),
    quantity: z.number().int(),
    unitPriceInCents: cents,
    lineSubtotalInCents: cents,
    /** Taken from the seller, not added to the buyer's total. */
    platformFeeInCents: cents,
  })
  .meta({ id: 'CheckoutItem' });

export const checkoutOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    storeId: z.uuid(),
    buyerUserId: z.uuid(),
    sellerUserId: z.uuid(),
    status: z.enum(CHECKOUT_STATUSES),
    paymentMethod: z.enum(PAYMENT_METHODS),
    currency: z.string(),
    itemsSubtotalInCents: cents,
    platformFeeInCents: cents,
    /** What the buyer pays: the items subtotal (the fee is the seller's). */
    totalInCents: cents,
    message: z.string().nullable(),
    items: z.array(checkoutItemOutput),
    payment: paymentOutput.nullable(),
    paidAtUtc: z.iso.datetime().nullable(),
    canceledAtUtc: z.iso.datetime().nullable(),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Checkout' });
export type CheckoutOutput = z.infer<typeof checkoutOutput>;
export const checkoutPage = pagedOutput(checkoutOutput).meta({ id: 'CheckoutPage' });

export const checkoutResultOutput = z
  .object({
    checkouts: z.array(checkoutOutput),
    inquiries: z.array(inquiryOutput),
    summaries: z.array(z.object({ storeId: z.uuid(), checkoutItemCount: z.number().int(), inquiryCount: z.number().int() })),
  })
  .meta({ id: 'CartCheckoutResult' });
export type CheckoutResultOutput = z.infer<typeof checkoutResultOutput>;

const paymentMethod = lenientEnum(PAYMENT_METHODS);

export const checkoutCartInput = z.object({
  /** Optional when the X-Session-Id session has a selected territory. */
  territoryId: zId.nullish(),
  paymentMethod: paymentMethod.default('PIX'),
  /** Attached to the checkouts, and to the inquiries of the lines that cannot be bought. */
  message: zOptionalText(CHECKOUT_MESSAGE_MAX),
  /** CARD: the card token from the gateway's client library (`tok_fake_declined` is declined by the fake gateway). */
  paymentToken: z.string().trim().min(1).max(200).nullish(),
});
export type CheckoutCartInput = z.infer<typeof checkoutCartInput>;

export const checkoutIdInput = z.object({ checkoutId: zId });
export const myCheckoutsInput = z.object({ ...skipTakeInput() });
export const myCheckoutsPagedInput = z.object({ ...pageInput });
export const storeOrdersInput = z.object({ storeId: zId, ...skipTakeInput() });

export const simulatePaymentInput = z.object({
  checkoutId: zId,
  outcome: lenientEnum(['SUCCEEDED', 'FAILED']),
});
