import {
  ApiError,
  CaptureStatus,
  CustomError,
  OrderStatus,
  type CapturedPayment,
  type Order,
} from '@paypal/paypal-server-sdk';
import { normalizeDeclineCode } from '../../domain/declines.js';
import { isUnanswered } from './network-error.js';
import type { PayPalAnswer } from './paypal-nvp.js';
import { declined } from './types.js';

/** The issue PayPal names in an error body (`INSTRUMENT_DECLINED`), or its error name. */
export function issueOf(error: CustomError): string {
  return error.result?.details?.[0]?.issue ?? error.result?.name ?? '';
}

/** A lost answer, a timeout or PayPal's own failure: the payment may or may not have been made. */
export const isAmbiguous = (error: unknown) =>
  isUnanswered(error, error instanceof ApiError ? error.statusCode : undefined);

/**
 * Our outcome of a capture (an order's, or one read by its id): a declined one carries the processor's
 * response code and payment advice code when PayPal gives them (card-funded payments); one refunded since
 * was collected all the same; one PayPal has not completed or refused yet (`PENDING`: an eCheck, a review)
 * is no answer, and names the capture to read later.
 */
export function captureAnswer(
  capture: Pick<CapturedPayment, 'id' | 'status' | 'statusDetails' | 'processorResponse'>,
): PayPalAnswer {
  const id = capture.id ?? null;
  const processor = capture.processorResponse;
  switch (capture.status) {
    // Taken: refunded since (in part or whole) by the merchant, it was still collected.
    case CaptureStatus.Completed:
    case CaptureStatus.PartiallyRefunded:
    case CaptureStatus.Refunded:
      if (id) return { kind: 'approved', gatewayTransactionId: id };
      break;
    case CaptureStatus.Declined:
      return declined(
        normalizeDeclineCode(processor?.responseCode) || 'generic_decline',
        processor?.paymentAdviceCode ?? null,
        id,
      );
    case CaptureStatus.Failed:
      return declined('processing_error', null, id);
  }
  const reason = capture.statusDetails?.reason;
  return {
    unanswered: `PayPal capture ${id ?? ''} is ${capture.status ?? 'without a status'}${reason ? ` (${reason})` : ''}`,
    ...(id ? { paymentId: id } : {}),
  };
}

/** Our outcome of an order made with a billing agreement (see `captureAnswer` for its capture). */
export function orderAnswer(order: Order): PayPalAnswer {
  if (order.status === OrderStatus.PayerActionRequired)
    return declined('authentication_required', null, order.id ?? null);
  const capture = order.purchaseUnits?.[0]?.payments?.captures?.[0];
  if (capture) return captureAnswer(capture);
  return { unanswered: `PayPal order ${order.id ?? ''} is ${order.status ?? ''} with no capture yet` };
}
