import { expect } from 'vitest';
import type { RecoveryDoc } from '../../store/recoveries.js';
import type { SandboxCharge } from '../../store/test-gateway.js';
import { eventsOf } from './events.js';
import { poll } from './poll.js';
import type { Stack } from './stack.js';

/**
 * Posts a platform webhook body as the platform sends it (exact bytes) to an account's intake URL;
 * `platform` is any path segment, so unknown platforms can be tried too.
 */
export async function postWebhook(
  stack: Stack,
  platform: string,
  clientId: string,
  body: string,
  headers: Record<string, string>,
) {
  const res = await fetch(`${stack.baseUrl}/api/connectors/${platform}/webhook/${clientId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
}

/** Waits until the recovery of `invoiceId` (its idempotency key) satisfies `ready`; returns it, or the last read. */
export function recoveryOfInvoice(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  ready: (doc: RecoveryDoc) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<RecoveryDoc | null> {
  return poll(
    () => stack.stores.recoveries.findByKey(accountId, invoiceId),
    (doc) => doc !== null && ready(doc),
    { timeoutMs },
  );
}

/**
 * Waits until the invoice's recovery has written its payment back, and checks what every recovered
 * platform failure shares: keyed by the invoice, succeeded, written back as `writeBack`.
 */
export async function writtenBack(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  writeBack: RecoveryDoc['writeBack'] = 'recorded',
): Promise<RecoveryDoc> {
  const doc = await recoveryOfInvoice(stack, accountId, invoiceId, (d) => d.writeBack !== undefined);
  expect(doc).toMatchObject({ idempotencyKey: invoiceId, state: 'succeeded', writeBack });
  return doc!;
}

/**
 * The platform's failure of `invoiceId` was declined again and queued; `sendUpdate` reports the customer's
 * new card: the queued recovery retries with it at once, succeeds on `newToken` and is written back.
 */
export async function cardUpdateRecovers(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  sendUpdate: () => Promise<{ body: Record<string, unknown> }>,
  newToken: string,
): Promise<RecoveryDoc> {
  const queued = await recoveryOfInvoice(stack, accountId, invoiceId, (d) => d.state === 'queued');
  expect(queued).toMatchObject({ state: 'queued', lastDeclineCode: 'do_not_honor' });
  const res = await sendUpdate();
  expect(res.body).toEqual({ received: true, action: 'card_updated', recoveriesRetried: 1 });
  const done = await writtenBack(stack, accountId, invoiceId);
  expect(done.paymentMethodToken).toBe(newToken);
  return done;
}

/**
 * The platform delivers one failure event twice: the second answer is a duplicate, and the one recovery
 * (the first answer's) ends written back.
 */
export async function redeliveryIsDuplicate(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  deliver: () => Promise<{ status: number; body: Record<string, unknown> }>,
): Promise<RecoveryDoc> {
  const first = await deliver();
  const again = await deliver();
  expect(again).toEqual({
    status: 200,
    body: { received: true, duplicate: true, action: 'recovery_started' },
  });
  const doc = await writtenBack(stack, accountId, invoiceId);
  expect(doc._id).toBe(first.body.transactionId);
  return doc;
}

/**
 * A platform's notice of an expiring card is forwarded as one card.expiring_soon (the platform variant,
 * with `expected` in it); a redelivery is a duplicate, and a redelivery after a crash between sending and
 * recording the event (its handling never marked done) finds the same event: still one.
 */
export async function expiryNoticeForwarded(
  stack: Stack,
  accountId: string,
  post: () => Promise<{ status: number; body: Record<string, unknown> }>,
  expected: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await post();
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ received: true, action: 'card_expiring', eventId: expect.any(String) });
  const eventId = String(res.body.eventId);
  const stored = await stack.stores.events.get(eventId);
  const payload = stored?.payload as Record<string, unknown>;
  expect(payload).toMatchObject({ event: 'card.expiring_soon', clientId: accountId, ...expected });
  expect(payload).not.toHaveProperty('preemptive');
  expect(payload).not.toHaveProperty('expiryMonth');

  expect((await post()).body).toMatchObject({ duplicate: true, action: 'card_expiring' });
  await stack.stores.db
    .collection('connectorEvents')
    .updateMany({ accountId }, { $set: { doneAt: null, outcome: null } });
  expect((await post()).body).toEqual({ received: true, action: 'card_expiring', eventId });
  const all = await stack.stores.events.list({ accountId, limit: 100 });
  expect(all.filter((e) => e.type === 'card.expiring_soon')).toHaveLength(1);
  return payload;
}

/**
 * The platform reported the invoice paid while its recovery waited for its next attempt: the recovery ends
 * `paid_elsewhere`, its workflow has ended (no timer is left to make the attempt that was due next), and
 * nothing more was charged or attempted. Returns the recovery.
 */
export async function stoppedPaidElsewhere(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  before: { token: string; charged: number; attempts: number },
): Promise<RecoveryDoc> {
  const done = await recoveryOfInvoice(stack, accountId, invoiceId, (d) => d.state === 'paid_elsewhere');
  expect(done).toMatchObject({ state: 'paid_elsewhere', nextAttemptAt: null });
  const workflow = stack.temporal.workflow.getHandle(done!.workflowId);
  await workflow.result();
  expect((await workflow.describe()).status.name).toBe('COMPLETED');
  expect(await stack.stores.sandbox.countForToken('test', before.token)).toBe(before.charged);
  expect(done!.attempts).toHaveLength(before.attempts);
  return done!;
}

/**
 * A paid notice of an invoice whose recovery already succeeded (Recoup's own recorded payment, or the
 * platform's late one) is ignored, and the recovery is left as it is: still `succeeded` (with `fields`),
 * not marked paid by the customer on their own.
 */
export async function paidNoticeLeftSucceeded(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  answer: { body: Record<string, unknown> },
  fields: Partial<RecoveryDoc> = {},
): Promise<void> {
  expect(answer.body).toEqual({
    received: true,
    action: 'ignored',
    reason: "The invoice's recovery has ended (succeeded)",
  });
  const doc = await recoveryOfInvoice(stack, accountId, invoiceId);
  expect(doc).toMatchObject({ state: 'succeeded', ...fields });
  expect(doc).not.toHaveProperty('paidOnTheirOwnAt');
}

/**
 * The platform reported part of the invoice paid (`sendPartial`) while its recovery waited: the intake
 * answers `amount_lowered`, and the retry the customer's new card brings (`sendUpdate`) collects only
 * `amountDue`: charged on `newToken`, in the read model, in recovery.success and written back (the
 * caller checks its platform's write-back request). Returns the recovery.
 */
export async function collectsWhatIsStillDue(
  stack: Stack,
  accountId: string,
  invoiceId: string,
  steps: {
    sendPartial: () => Promise<{ body: Record<string, unknown> }>;
    sendUpdate: () => Promise<unknown>;
    newToken: string;
    amountDue: number;
    /** The gateway's record of the charge; the test gateway's by default. */
    charged?: (doc: RecoveryDoc) => Promise<{ token: string; amount: number } | null>;
  },
): Promise<RecoveryDoc> {
  const queued = await recoveryOfInvoice(stack, accountId, invoiceId, (d) => d.state === 'queued');
  expect(queued!.amount).toBeGreaterThan(steps.amountDue);
  expect((await steps.sendPartial()).body).toEqual({
    received: true,
    action: 'amount_lowered',
    transactionId: queued!.publicId,
    amountDue: steps.amountDue,
  });
  await steps.sendUpdate();
  const done = await writtenBack(stack, accountId, invoiceId);
  expect(done).toMatchObject({ amount: steps.amountDue, paymentMethodToken: steps.newToken });
  const charged =
    steps.charged ??
    ((doc) =>
      stack.stores.db
        .collection<SandboxCharge>('sandboxCharges')
        .findOne({ transactionId: doc.gatewayTransactionId! }));
  expect(await charged(done)).toMatchObject({ token: steps.newToken, amount: steps.amountDue });
  const events = await eventsOf(stack, accountId, ['recovery.success']);
  const success = events.find((e) => e.type === 'recovery.success');
  expect(success?.payload).toMatchObject({ serviceTransactionId: done.publicId, amount: steps.amountDue });
  return done;
}
