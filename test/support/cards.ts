import type { SandboxCard } from '../../store/test-gateway.js';

/**
 * A Visa card on file at an account's test gateway, as the card sweep lists it: expiring in the month of
 * `now` (the default `expires`), saved at `now`, with the customer's email given (ada@example.com else).
 */
export function cardOnFile(
  accountId: string,
  token: string,
  opts: { now?: Date; expires?: { expMonth: number; expYear: number }; customerEmail?: string } = {},
): SandboxCard {
  const now = opts.now ?? new Date();
  return {
    _id: token,
    accountId,
    gateway: 'test',
    brand: 'visa',
    last4: '4242',
    ...(opts.expires ?? { expMonth: now.getUTCMonth() + 1, expYear: now.getUTCFullYear() }),
    customerEmail: opts.customerEmail ?? 'ada@example.com',
    createdAt: now,
  };
}
