import { chargebeeEvent } from './chargebee-emulator.js';

/**
 * The payment_failed event Chargebee posts when its automatic collection of `invoice` failed on the card
 * Chargebee knows by `referenceId` (`<gateway customer>/<token>`): only the fields the connector reads.
 */
export function chargebeePaymentFailed(invoice: {
  id: string;
  customerId: string;
  amount: number;
  referenceId: string;
  errorCode: string;
}): string {
  const { id, customerId, amount } = invoice;
  return JSON.stringify(
    chargebeeEvent('payment_failed', {
      transaction: {
        customer_id: customerId,
        status: 'failure',
        amount,
        currency_code: 'USD',
        error_code: invoice.errorCode,
        linked_invoices: [{ invoice_id: id, applied_amount: 0, invoice_status: 'payment_due' }],
      },
      invoice: {
        id,
        customer_id: customerId,
        status: 'payment_due',
        amount_due: amount,
        currency_code: 'USD',
      },
      customer: {
        id: customerId,
        email: `${customerId.toLowerCase()}@example.com`,
        payment_method: {
          type: 'card',
          gateway: 'stripe',
          status: 'valid',
          reference_id: invoice.referenceId,
        },
      },
    }),
  );
}
