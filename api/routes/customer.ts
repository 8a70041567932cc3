import type { Client } from '@temporalio/client';
import { eraseCustomer } from '../../services/customer-erasure.js';
import { exportCustomer } from '../../services/customer-export.js';
import { FootprintTooWideError, maxFootprintRounds } from '../../services/customer-footprint.js';
import { paywallOf } from '../../services/paywall.js';
import { stopRecovery } from '../../services/recovery-stop.js';
import type { Stores } from '../../store/index.js';
import { isOfMode } from '../../store/modes.js';
import type { TaskQueues } from '../../worker/task-queues.js';
import { accountOf } from '../context.js';
import { badRequest, conflict } from '../http-error.js';
import { reply, route } from '../route.js';
import {
  CustomerExport,
  CustomerIdentity,
  ErasureRefused,
  ErasureResult,
  FootprintTooWide,
  PaywallQuery,
  PaywallStatus,
  pulseClockSkewMinutes,
  PulseRequest,
  PulseResult,
} from '../schemas/customer.js';

interface Deps {
  stores: Stores;
  temporal: Client;
  queues: TaskQueues;
  clock: () => Date;
}

/** 409: the customer's identifiers tie together records of more than one customer; nothing was read or changed. */
const footprintTooWide = () =>
  conflict({
    error: 'Customer footprint too wide',
    message: `The customer's identifiers tie together records of more than one customer (cards and email addresses shared with others still led to new records after ${maxFootprintRounds} lookups), so Recoup refuses to guess which are theirs. Nothing was read out or changed: the deployment's operator can look at those records.`,
  });

/** Runs a customer's export or erasure; a footprint too wide to settle is answered 409, not 500. */
async function refusingWideFootprints<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof FootprintTooWideError) throw footprintTooWide();
    throw error;
  }
}

const footprintTooWideResponse = {
  description:
    "The customer's identifiers tie together records of more than one customer; nothing was read out or changed",
  schema: FootprintTooWide,
};

/**
 * The stored id of the failed payment a pulse says it pays (null: none); 400 unless it is a recovery of
 * the account in the pulse's mode, so a pulse that names a failure always names one of its own, and a
 * sandbox payment never settles a live failure (nor a live one a sandbox failure).
 */
async function paidFailure(
  stores: Stores,
  account: { id: string; testMode: boolean },
  named: string | null,
): Promise<string | null> {
  if (named === null) return null;
  const failure = await stores.recoveries.find(account.id, named);
  if (!failure)
    throw badRequest({ paysTransactionId: ['no recovery of this account has this transactionId'] });
  if (!isOfMode(failure, account.testMode))
    throw badRequest({
      paysTransactionId: [
        account.testMode
          ? 'is a live recovery: a pulse logged in test mode pays only a sandbox one'
          : 'is a sandbox recovery: a live pulse pays only a live one',
      ],
    });
  return failure._id;
}

/** Organic-success logging (pulse), the paywall lookup, and a customer's data: its export and erasure. */
export function customerRoutes({ stores, temporal, queues, clock }: Deps) {
  return [
    route({
      method: 'post',
      path: '/api/recovery/pulse',
      tag: 'Pulse',
      summary: 'Log a payment that succeeded on the first try (the baseline for lift)',
      description:
        "A pulse is logged in the account's current mode: in test mode it is the sandbox's, counted only by reports of test mode, and its transactionId is kept apart from live ones. A pulse that names the failed payment it pays (paysTransactionId, a recovery of the same mode: a sandbox one in test mode, a live one once live; 400 otherwise) also settles that failure as POST /api/recovery/stop with paid_elsewhere does: a queued recovery stops before any further attempt, one that ended unpaid (a Proof Mode control included) keeps its outcome and is recorded paid on the customer's own, and either way the customer is no longer past due for it; one Recoup collected stays as it is. With an attempt under way, the answer waits for it as a stop does (a few seconds); the recovery then stops right after it (settled as paid elsewhere if it ends unpaid). The pulse is logged and the answer is 200 whatever became of the recovery; if the settlement cannot be asked (Temporal not answering) the answer is 5xx, and the same pulse sent again (same transactionId) is logged once and settles it.",
      auth: 'secret',
      body: PulseRequest,
      responses: { 200: { description: 'Logged', schema: PulseResult } },
      async handle(ctx, { body }) {
        const now = clock();
        const occurredAt = body.occurredAt ? new Date(body.occurredAt) : now;
        // A payment dated in the future would count as organic in the report of a window it never fell in;
        // only clock skew explains one. Checked here against the service's clock, which the schema lacks.
        if (occurredAt.getTime() - now.getTime() > pulseClockSkewMinutes * 60_000)
          throw badRequest({
            occurredAt: [`must not be more than ${pulseClockSkewMinutes} minutes in the future`],
          });
        const account = accountOf(ctx);
        const accountId = account.id;
        const pulse = await stores.pulses.log(
          {
            accountId,
            ...(account.testMode ? { isSimulated: true as const } : {}),
            merchantTransactionId: body.transactionId ?? null,
            amount: body.amount,
            currency: body.currency,
            customerEmail: body.customerEmail ?? null,
            ...(body.paysTransactionId === undefined
              ? {}
              : { paysTransactionId: await paidFailure(stores, account, body.paysTransactionId) }),
            occurredAt,
          },
          now,
        );
        // The merchant says the customer paid that failure: settled as their stop with paid_elsewhere would
        // be. After the pulse is logged: a pulse re-sent after a failure here logs nothing twice and settles.
        if (pulse.paysTransactionId)
          await stopRecovery(
            { stores, temporal, queues },
            accountId,
            { transactionId: pulse.paysTransactionId },
            'paid_elsewhere',
          );
        return reply(200, { success: true, message: 'Organic success logged', transactionId: pulse._id });
      },
    }),
    route({
      method: 'get',
      path: '/api/recovery/paywall-status',
      tag: 'Paywall',
      summary: 'Whether a customer has unrecovered past-due payments',
      description:
        'Accepts the publishable key as well as the secret key; open to browsers (CORS); 120 requests per minute per key.',
      auth: 'secret-or-publishable',
      rateLimit: 'paywall',
      cors: true,
      query: PaywallQuery,
      responses: { 200: { description: 'Paywall status', schema: PaywallStatus } },
      async handle(ctx, { query }) {
        return reply(200, await paywallOf(stores, accountOf(ctx), query.customerEmail));
      },
    }),
    route({
      method: 'post',
      path: '/api/customers/export',
      tag: 'Customer',
      summary: 'Everything Recoup holds about a customer (a data-subject access request)',
      description:
        "The identifiers Recoup links to the customer, their recoveries with the personal fields of each request and every attempt, their pulses, the webhook events about them as sent, and the hosted links minted for them. Changes nothing. Refused with 409 when the customer's identifiers tie together records of more than one customer (cards or addresses shared with others): Recoup does not guess which are theirs.",
      auth: 'secret',
      body: CustomerIdentity,
      responses: {
        200: { description: 'What Recoup holds about the customer', schema: CustomerExport },
        409: footprintTooWideResponse,
      },
      async handle(ctx, { body }) {
        const exported = await refusingWideFootprints(() =>
          exportCustomer(stores, accountOf(ctx).id, body, clock()),
        );
        return reply(200, exported);
      },
    }),
    route({
      method: 'post',
      path: '/api/customers/erase',
      tag: 'Customer',
      summary: 'Erase a customer (a data-protection request)',
      description:
        'Deletes the webhook events and hosted links about the customer and their workflow histories, and replaces their email, payment-method tokens, card number prefix and billing-platform customer id in the recoveries and pulses kept for your books (amounts, states, decline codes and dates stay, so reports do not change). Refused with 409 while a recovery of theirs or a delivery of one of their events is under way, and when their identifiers tie together records of more than one customer (cards or addresses shared with others): Recoup does not guess which are theirs. Running it again finishes an interrupted erasure and otherwise finds nothing.',
      auth: 'secret',
      body: CustomerIdentity,
      responses: {
        200: { description: 'Erased: what was deleted or pseudonymised', schema: ErasureResult },
        409: {
          description:
            "Something of the customer is still under way (listed), or the customer's identifiers tie together records of more than one customer; nothing was changed (unless recoveries of the customer were admitted while the erasure ran: what it found before is erased, and erasing again finishes it)",
          schema: ErasureRefused,
        },
      },
      async handle(ctx, { body }) {
        const outcome = await refusingWideFootprints(() =>
          eraseCustomer({ stores, temporal, clock }, accountOf(ctx).id, body),
        );
        if (outcome.kind === 'in_flight')
          throw conflict({
            error: 'Customer has work under way',
            message: `Recoveries of this customer are under way or webhook events about them are being delivered: stop the recoveries (POST /api/recovery/stop, reason not_owed) or wait for them and the deliveries to end, then erase again. ${outcome.partly ? 'These were admitted or published while the erasure ran: what it found before them is erased, and erasing again finishes it.' : 'Nothing was changed.'}`,
            transactionIds: outcome.transactionIds,
            eventIds: outcome.eventIds,
            erasedSoFar: outcome.partly,
          });
        const { kind: _kind, erasedAt, ...counts } = outcome;
        return reply(200, { erased: true as const, erasedAt: erasedAt.toISOString(), ...counts });
      },
    }),
  ];
}
