import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../store/events.js';
import { closeServer, readText, serveEmulator } from './support/emulator-http.js';
import { startPayPalEmulator, type PayPalEmulator } from './support/paypal-emulator.js';
import { call, type Stack } from './support/stack.js';
import { stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// The whole service on Temporal's time-skipping server, against the PayPal emulator on the server's clock:
// a lost answer is looked up as the workflow does it, 30 seconds later and then backing off.

let env: TestWorkflowEnvironment;
let stack: Stack;
let paypal: PayPalEmulator;
let recorder: Recorder;
const hour = 3_600_000;
const day = 24 * hour;

beforeAll(async () => {
  env = await startTimeSkipping();
  stack = await stackOnTimeSkipping(env);
  paypal = await startPayPalEmulator(async () => new Date(await env.currentTimeMs()));
  recorder = await recordingProxy(paypal.url);
});
afterEach(() => paypal.settleAfter(0));
afterAll(async () => {
  await recorder?.close();
  await paypal?.close();
  await stack?.close();
  await env?.teardown();
});

interface Recorder {
  url: string;
  /** Each request PayPal got (`GET /v2/payments/captures/X`, `NVP GetTransactionDetails X` …), at the server's time. */
  seen: Array<{ request: string; at: number }>;
  close: () => Promise<void>;
}

/**
 * A pass-through to the emulator that notes every request but OAuth's: how each lookup asked PayPal (the
 * request sent again, or the payment read by its id). A connection the emulator cuts is cut here too.
 */
async function recordingProxy(target: string): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const { server, url } = await serveEmulator(
    async (req, res) => {
      const body = await readText(req);
      const path = new URL(req.url ?? '/', target).pathname;
      const form = new URLSearchParams(body);
      const request =
        path === '/nvp'
          ? `NVP ${form.get('METHOD') ?? ''} ${form.get('TRANSACTIONID') ?? ''}`.trim()
          : `${req.method ?? ''} ${path}`;
      if (path !== '/v1/oauth2/token') seen.push({ request, at: await env.currentTimeMs() });
      const headers = Object.entries(req.headers).filter(
        (h): h is [string, string] => typeof h[1] === 'string' && !['host', 'connection'].includes(h[0]),
      );
      const answer = await fetch(new URL(req.url ?? '/', target), {
        method: req.method ?? 'GET',
        headers: Object.fromEntries(headers),
        ...(body ? { body } : {}),
      }).catch(() => null);
      if (!answer) return res.socket?.destroy();
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
      res.end(await answer.text());
    },
    { https: true },
  );
  return { url, seen, close: () => closeServer(server) };
}

/** Executes a PayPal payment of `token` on a PayPal account (through `apiBase`, if given). */
async function executeOnPayPal(token: string, apiBase?: string) {
  const credentials = apiBase ? { ...paypal.credentials, apiBase } : paypal.credentials;
  const { apiKey, account } = await stack.createAccount({}, [
    { name: 'paypal', kind: 'paypal', test: false, credentials },
  ]);
  const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      amount: 2500,
      currency: 'usd',
      paymentMethodToken: token,
      paymentMethodType: 'paypal',
      originalDeclineCode: 'try_again_later',
    },
  });
  const transactionId = String(answer.body.transactionId);
  const doc = await stack.stores.recoveries.find(account.id, transactionId);
  return {
    answer,
    accountId: account.id,
    transactionId,
    handle: env.client.workflow.getHandle(doc!.workflowId),
  };
}

/** The recovery's record and its `recovery.*` events, once it has ended. */
async function endOf({ accountId, transactionId, handle }: Awaited<ReturnType<typeof executeOnPayPal>>) {
  await handle.result();
  const final = (await stack.stores.recoveries.find(accountId, transactionId))!;
  const events = (await stack.stores.events.list({ accountId, limit: 100 })).filter((e: EventRecord) =>
    e.type.startsWith('recovery.'),
  );
  return { final, events };
}

/** Executes a PayPal payment of `token` on a PayPal account and lets its recovery run to its end. */
async function recoverOnPayPal(token: string) {
  const started = await executeOnPayPal(token);
  return { answer: started.answer, ...(await endOf(started)) };
}

describe('a PayPal reference transaction whose answer is lost', () => {
  it('is reconciled by PayPal’s answer to the same MSGSUBID (error 11607 with the payment’s fields): one payment, never a second under another key', async () => {
    // Were 11607 read as a decline, the recovery would try again later under a new key, and pay again.
    paypal.addSource('6LOSTREF00000000', ['lost', 'complete']);
    const out = await recoverOnPayPal('reference|6LOSTREF00000000');
    expect(out.answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
    expect(out.final.state).toBe('succeeded');
    const payments = paypal.payments().filter((p) => p.source === '6LOSTREF00000000');
    expect(payments).toHaveLength(1);
    expect(out.final.attempts).toEqual([
      expect.objectContaining({ outcome: 'approved', gatewayTransactionId: payments[0]!.id }),
    ]);
    expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
    expect(out.events[0]!.payload).toMatchObject({ trigger: 'reconciliation' });
  });
});

describe('a PayPal payment whose answer is lost and whose first lookup finds it pending', () => {
  it.each([
    ['billing-agreement', 'B-7PENDLOST000000', 'POST /v2/checkout/orders', 'GET /v2/payments/captures/'],
    ['reference', '6PENDLOST0000000', 'NVP DoReferenceTransaction', 'NVP GetTransactionDetails '],
  ] as const)(
    '(%s) is read by the id that lookup learned, long after PayPal has forgotten the request, until it completes: recovered, paid once',
    async (via, source, sent, readById) => {
      // The charge gets a 500 (no answer: nothing is made); the lookup sends it again and PayPal makes the
      // attempt's payment, pending (an eCheck) for a day. After 6 hours PayPal no longer knows the request:
      // the same request again would only meet its duplicate-invoice block, and the attempt would stay ambiguous.
      paypal.settleAfter(day);
      paypal.addSource(source, ['server_error', 'pending']);
      recorder.seen.length = 0;
      const started = await executeOnPayPal(`${via}|${source}`, recorder.url);
      expect(started.answer).toMatchObject({ status: 202, body: { status: 'unknown' } });
      await env.sleep(2 * day);
      expect((await started.handle.describe()).status.name).toBe('COMPLETED');
      const out = await endOf(started);
      const payments = paypal.payments().filter((p) => p.source === source);
      expect(payments).toEqual([expect.objectContaining({ status: 'PENDING' })]);
      const paymentId = payments[0]!.id;
      expect(out.final.state).toBe('succeeded');
      expect(out.final.attempts).toEqual([
        expect.objectContaining({ outcome: 'approved', gatewayTransactionId: paymentId }),
      ]);
      expect(out.events.map((e) => e.type)).toEqual(['recovery.success']);
      // The charge and the first lookup sent the request; every later read was of the payment by its id,
      // the last of them once PayPal had completed it, a day later.
      const requests = recorder.seen.map((r) => r.request);
      expect(requests.slice(0, 2)).toEqual([sent, sent]);
      expect(requests.slice(2)).toEqual(requests.slice(2).map(() => `${readById}${paymentId}`));
      expect(requests.length).toBeGreaterThan(4);
      expect(recorder.seen.at(-1)!.at - recorder.seen[0]!.at).toBeGreaterThanOrEqual(day);
    },
  );
});
