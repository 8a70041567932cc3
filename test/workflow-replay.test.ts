import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { admitRecovery } from '../api/admit-recovery.js';
import { startRecovery } from '../api/start-recovery.js';
import { linkUseWorkflowId } from '../domain/links.js';
import { RecoveryRequest } from '../domain/recovery-request.js';
import type { GatewayConfig } from '../domain/settings.js';
import { webhookWorkflowId } from '../domain/webhooks.js';
import { sha256 } from '../runtime/crypto.js';
import { createLogger } from '../runtime/logger.js';
import { serverClock } from '../scripts/time-skipping.js';
import { ensureDailyWorkflows, runCardSweep } from '../services/card-sweep.js';
import { createLinkOutcomes } from '../services/link-outcomes.js';
import { recoveryInputOf } from '../services/recovery-start.js';
import {
  amountDueSignal,
  cardUpdatedSignal,
  paidElsewhereSignal,
} from '../workflows/recovery-definitions.js';
import { cardOnFile } from './support/cards.js';
import { startChargebeeEmulator } from './support/chargebee-emulator.js';
import { chargebeePaymentFailed } from './support/chargebee-payment-failed.js';
import { postWebhook, recoveryOfInvoice } from './support/connectors.js';
import { sampleEvent } from './support/sample-events.js';
import { call, type Stack } from './support/stack.js';
import { skipTo, stackOnTimeSkipping, startTimeSkipping } from './support/time-skipping.js';

// Workflows run for weeks, so a worker of a new version replays histories an earlier one wrote. Each
// folder of test/histories holds the histories of one recording (the time of the commit it ran, UTC, and
// the commit: the newest sorts last), made by
// this file with RECORD_HISTORIES=<folder name>; every one of them must replay on today's workflow code,
// or a deployment would fail recoveries under way (a change of workflow code that alters its steps needs
// `patched()`). Record a new folder whenever a workflow's steps change.

const root = join(import.meta.dirname, 'histories');

interface Recorded {
  scenario: string;
  workflowId: string;
  history: unknown;
}

const recordings = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory());

describe.skipIf(process.env.RECORD_HISTORIES).each(recordings.map((d) => d.name))(
  'histories recorded as %s',
  (folder) => {
    const files = readdirSync(join(root, folder)).filter((f) => f.endsWith('.json'));
    it.each(files)('%s replays on today’s workflow code', async (file) => {
      const recorded = JSON.parse(readFileSync(join(root, folder, file), 'utf8')) as Recorded;
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') } },
        // Read with the SDK's own protobuf classes (historyFromJSON trips over a second protobufjs copy).
        temporal.api.history.v1.History.fromObject(recorded.history as object),
        recorded.workflowId,
      );
    });
    // An older recording lacks scenarios added since; the newest has them all.
    const newest =
      folder ===
      recordings
        .map((d) => d.name)
        .sort()
        .at(-1);
    it(newest ? 'holds every scenario' : 'holds only known scenarios', () => {
      const names = files.map((f) => f.replace(/\.json$/, ''));
      if (newest) expect(names.sort()).toEqual(Object.keys(scenarios).sort());
      else expect(names.filter((name) => !(name in scenarios))).toEqual([]);
    });
  },
);

/** The scenarios recorded, each to the workflow whose history is kept: every kind of path a workflow takes. */
const scenarios: Record<string, (stack: Stack, env: TestWorkflowEnvironment) => Promise<string>> = {
  /** Queued to a payday, retried then, recovered. */
  'recovery-queued-recovered': (stack) =>
    recovery(stack, { paymentMethodToken: 'tok_visa', originalDeclineCode: 'insufficient_funds' }),
  /** Queued, then the issuer answers the retry with a blocking decline. */
  'recovery-queued-blocked': (stack) =>
    recovery(stack, {
      paymentMethodToken: 'tok_decline_stolen_card',
      originalDeclineCode: 'insufficient_funds',
    }),
  /**
   * Queued, then the retry is declined with a code classified only since 2026-11-26 (Stripe's "do not try
   * again"): recorded before then, it is retried until the budget is spent, and must replay so.
   */
  'recovery-queued-later-code': (stack) =>
    recovery(stack, {
      paymentMethodToken: 'tok_decline_do_not_try_again',
      originalDeclineCode: 'insufficient_funds',
    }),
  /**
   * Queued, then the retry finds the payment no longer owed (Braintree's subscription_not_past_due): stopped
   * since 2026-11-26; recorded before then, it ends failed and must replay so.
   */
  'recovery-queued-not-owed': (stack) =>
    recovery(stack, {
      paymentMethodToken: 'tok_decline_subscription_not_past_due',
      originalDeclineCode: 'insufficient_funds',
    }),
  /**
   * Queued, then the billing platform reports part of it paid elsewhere (the amountDue signal, since
   * 2026-11-26): the retry collects what is still due. Recorded before then, the signal found no handler.
   */
  'recovery-amount-due': async (stack) => {
    const { apiKey, account } = await stack.createAccount();
    const queued = await call<{ transactionId: string }>(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: { amount: 5000, paymentMethodToken: 'tok_visa', originalDeclineCode: 'insufficient_funds' },
    });
    const doc = await stack.stores.recoveries.find(account.id, queued.body.transactionId);
    const handle = stack.temporal.workflow.getHandle(doc!.workflowId);
    await handle.signal(amountDueSignal, { amount: 3000 });
    await handle.result();
    return doc!.workflowId;
  },
  /** An ambiguous charge looked up at the gateway: it went through. */
  'recovery-reconciled': (stack) =>
    recovery(stack, { paymentMethodToken: 'tok_timeout', originalDeclineCode: 'try_again_later' }),
  /** A gateway that never charged (5xx), confirmed before the next attempt, until the budget is spent. */
  'recovery-not-charged': (stack) =>
    recovery(
      stack,
      { paymentMethodToken: 'tok_server_error', originalDeclineCode: 'try_again_later' },
      { retryPolicy: { maxAttempts: 2, maxDays: 21 }, riskSkipThreshold: 100 },
    ),
  /** A hard decline: failed in the first phase. */
  'recovery-failed-at-once': (stack) =>
    recovery(stack, { paymentMethodToken: 'tok_decline_expired_card', originalDeclineCode: 'expired_card' }),
  /** Stored by an intake that died before starting it, then stopped: its workflow starts told to stop. */
  'recovery-stopped-before-start': async (stack) => {
    const { apiKey, account } = await stack.createAccount();
    const request = RecoveryRequest.parse({
      amount: 2500,
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'try_again_later',
    });
    const admitted = await admitRecovery(stack.stores, account, request, new Date(Date.now() - 120_000));
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const stop = await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: admitted.doc._id, reason: 'not_owed' },
    });
    if (stop.status !== 200) throw new Error(`stop answered ${stop.status}`);
    return admitted.doc.workflowId;
  },
  /**
   * Queued with a fallback card; at the payday retry the merchant stops it while the primary card's charge
   * is under way (a gateway answering in 1.5 s): the fallback card's attempt, decided next, is given up.
   */
  'recovery-stopped-mid-retry': async (stack, env) => {
    // Three days before next month's 15th: the primary card waits for that payday, as the fallback then.
    const now = new Date(await env.currentTimeMs());
    await skipTo(env, Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 12, 10));
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'slot', kind: 'test', test: true, credentials: { latencyMs: '1500' } },
    ]);
    const primary = 'tok_decline_insufficient_funds';
    const queued = await call<{ transactionId: string }>(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        amount: 3100,
        paymentMethodToken: primary,
        fallbackPaymentMethodTokens: ['tok_decline_insufficient_funds_x1'],
        originalDeclineCode: 'insufficient_funds',
      },
    });
    const doc = await stack.stores.recoveries.find(account.id, queued.body.transactionId);
    const ended = stack.temporal.workflow.getHandle(doc!.workflowId).result();
    while ((await stack.stores.sandbox.countForToken('slot', primary)) === 0)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await call(stack.baseUrl, 'POST', '/api/recovery/stop', {
      key: apiKey,
      body: { transactionId: queued.body.transactionId, reason: 'not_owed' },
    });
    await ended;
    return doc!.workflowId;
  },
  /**
   * A billing platform's intake (answered at once) of a trial conversion with two cards; the platform reports
   * the invoice paid while the first card's charge is under way (a gateway answering in 1.5 s): the
   * fallback card's attempt is given up (since 2026-11-26; before, the first phase ran to its end first).
   */
  'recovery-stopped-in-first-phase': async (stack) => {
    const { account } = await stack.createAccount({}, [
      { name: 'slow', kind: 'test', test: true, credentials: { latencyMs: '1500' } },
    ]);
    const primary = 'tok_decline_incorrect_number';
    const request = RecoveryRequest.parse({
      amount: 3200,
      paymentMethodToken: primary,
      fallbackPaymentMethodTokens: ['tok_decline_invalid_number'],
      originalDeclineCode: 'insufficient_funds',
      isTrialConversion: true,
    });
    const admitted = await admitRecovery(stack.stores, account, request, serverClock());
    if (admitted.kind !== 'admitted') throw new Error('not admitted');
    const { workflowId } = admitted.doc;
    await startRecovery(stack.temporal, stack.queues, workflowId, recoveryInputOf(admitted.doc), {
      wait: false,
    });
    while ((await stack.stores.sandbox.countForToken('slow', primary)) === 0)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const handle = stack.temporal.workflow.getHandle(workflowId);
    await handle.signal(paidElsewhereSignal);
    await handle.result();
    return workflowId;
  },
  /**
   * A trial conversion on an expired card (a gateway answering in 1.5 s); the customer's new card comes while
   * that charge is under way: it is tried before the recovery ends (since 2026-11-26; before, it ended).
   */
  'recovery-card-updated-last-attempt': async (stack) => {
    const { apiKey, account } = await stack.createAccount({}, [
      { name: 'slow', kind: 'test', test: true, credentials: { latencyMs: '1500' } },
    ]);
    const old = 'tok_decline_expired_card';
    const answer = call(stack.baseUrl, 'POST', '/api/recovery/execute', {
      key: apiKey,
      body: {
        amount: 3300,
        paymentMethodToken: old,
        originalDeclineCode: 'insufficient_funds',
        isTrialConversion: true,
      },
    });
    while ((await stack.stores.sandbox.countForToken('slow', old)) === 0)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const [doc] = await stack.stores.recoveries.underWayOnToken(account.id, old);
    const handle = stack.temporal.workflow.getHandle(doc!.workflowId);
    await handle.signal(cardUpdatedSignal, { newToken: 'tok_mastercard', paymentMethodType: 'card' });
    await answer;
    await handle.result();
    return doc!.workflowId;
  },
  /**
   * Queued, then a new card the billing platform reported (`settleMs`, since 2026-11-27): it settles two
   * minutes, then is charged.
   */
  'recovery-platform-card-settled': async (stack) => {
    const queued = await queuedRecovery(stack);
    await queued.handle.signal(cardUpdatedSignal, {
      newToken: 'tok_mastercard',
      paymentMethodType: 'card',
      settleMs: 120_000,
    });
    await queued.handle.result();
    return queued.handle.workflowId;
  },
  /**
   * Queued, then a stop recorded on the recovery whose update never reached the workflow: read by the next
   * attempt's decision (since 2026-11-27), which stops the recovery instead.
   */
  'recovery-stop-recorded': async (stack) => {
    const queued = await queuedRecovery(stack);
    await stack.stores.recoveries.askStop(queued.doc._id, 'paid_elsewhere', new Date());
    await queued.handle.result();
    return queued.handle.workflowId;
  },
  /**
   * A trial conversion declined at once: its retry is planned (since 2026-11-27; before, every attempt went
   * at once), and collects.
   */
  'recovery-trial-retry-planned': (stack) =>
    recovery(stack, {
      paymentMethodToken: 'tok_decline_insufficient_funds_x1',
      originalDeclineCode: 'insufficient_funds',
      isTrialConversion: true,
    }),
  /**
   * Mastercard's advice 03 on the first attempt: blocked there (since 2026-11-27; before, the next attempt
   * was planned, refused by the networks' rules, and the recovery failed).
   */
  'recovery-stop-advice': (stack) =>
    recovery(stack, {
      paymentMethodToken: 'tok_decline_do_not_honor_mac03',
      binPrefix: '555555',
      originalDeclineCode: 'try_again_later',
    }),
  /** An expired card the account updater refreshes (the refreshCard local activity): the fresh card is charged. */
  'recovery-card-refreshed': (stack) =>
    recovery(stack, {
      paymentMethodToken: 'tok_decline_expired_card_updatable',
      originalDeclineCode: 'expired_card',
    }),
  /** A charge predicted to fail (a skip threshold of 0): skipped, recovery.skipped_high_risk, then failed. */
  'recovery-skipped-high-risk': (stack) =>
    recovery(
      stack,
      { paymentMethodToken: 'tok_visa', originalDeclineCode: 'insufficient_funds' },
      { riskSkipThreshold: 0 },
    ),
  /** Proof Mode: a customer in the control group is left alone, and the recovery ends in holdout. */
  'recovery-holdout': async (stack) => {
    const merchant = await stack.createAccount({ proofMode: { enabled: true, controlPercent: 50 } });
    const customerEmail = 'control@example.com';
    // Drawn before the request (a customer's group is sticky): the recording does not hang on a random draw.
    await stack.stores.holdouts.assign(merchant.account.id, customerEmail, () => true, serverClock());
    return recoveryOf(stack, merchant, {
      paymentMethodToken: 'tok_visa',
      originalDeclineCode: 'insufficient_funds',
      customerEmail,
    });
  },
  /** A failure reported as a stolen card: blocked at screening, before any attempt (403, recovery.blocked). */
  'recovery-blocked-at-screening': (stack) =>
    recovery(stack, { paymentMethodToken: 'tok_visa', originalDeclineCode: 'stolen_card' }),
  /** The primary gateway declines (do_not_honor): the first phase cascades to the backup gateway, which approves. */
  'recovery-backup-gateway': (stack) =>
    recovery(stack, { paymentMethodToken: 'tok_visa', originalDeclineCode: 'try_again_later' }, {}, [
      testGateway('main', { declineAll: 'do_not_honor' }),
      testGateway('backup'),
    ]),
  /** A Chargebee invoice's failure, recovered at once and written back to Chargebee (writeBackPayment). */
  'recovery-written-back': async (stack) => {
    const chargebee = await startChargebeeEmulator();
    try {
      const { account } = await stack.createAccount();
      const webhookAuth = { username: 'recoup-webhooks', password: 'replay-recording' };
      await stack.stores.accounts.setConnector(account.id, 'chargebee', {
        ...webhookAuth,
        site: chargebee.site,
        apiKey: chargebee.apiKey,
        apiBase: chargebee.url,
      });
      n += 1;
      const invoice = { id: `inv_replay_${n}`, customerId: `cus_replay_${n}`, amount: 2000 + n };
      chargebee.addInvoice({
        id: invoice.id,
        customer_id: invoice.customerId,
        amount_due: invoice.amount,
        currency_code: 'USD',
      });
      const body = chargebeePaymentFailed({
        ...invoice,
        referenceId: `${invoice.customerId}/tok_visa`,
        errorCode: 'PROCESSING_ERROR',
      });
      const basic = Buffer.from(`${webhookAuth.username}:${webhookAuth.password}`).toString('base64');
      const res = await postWebhook(stack, 'chargebee', account.id, body, {
        authorization: `Basic ${basic}`,
      });
      if (res.body?.action !== 'recovery_started') throw new Error(`intake answered ${JSON.stringify(res)}`);
      const doc = await recoveryOfInvoice(stack, account.id, invoice.id);
      if (!doc) throw new Error('no recovery of the invoice');
      await stack.temporal.workflow.getHandle(doc.workflowId).result();
      // The history is kept for its write-back: one that never reached Chargebee records another path.
      if (chargebee.recordPayments(invoice.id).length === 0) throw new Error('not written back');
      return doc.workflowId;
    } finally {
      await chargebee.close();
    }
  },
  /** Queued, then the customer's new card from a hosted link is charged at once. */
  'recovery-card-updated': async (stack) => (await cardUpdated(stack)).recovery,
  /** The follow-up of that link's use, which finds the use finished. */
  'link-use': async (stack) => (await cardUpdated(stack)).linkUse,
  /** The operator's sweep of one account with a card in its expiry month: card.expiring_soon. */
  'card-sweep-account': async (stack) => {
    const { accountId } = await sweptAccount(stack);
    return (await runCardSweep(stack.temporal, stack.queues, accountId, 60_000)).workflowId;
  },
  /** The deployment's daily card health sweep, two days of it (it runs for ever: a history in progress). */
  'card-health-sweep-daily': async (stack, env) =>
    (await dailyWorkflowsAfterTwoDays(stack, env)).cardHealthSweep,
  /** The deployment's daily data retention, two days of it, with an outbox check after an event published. */
  'data-retention-daily': async (stack, env) => (await dailyWorkflowsAfterTwoDays(stack, env)).dataRetention,
  /** recovery.failed to the test account's unreachable endpoint: the whole retry schedule, then given up. */
  'webhook-delivery-exhausted': async (stack) => {
    const recoveryId = await recovery(stack, {
      paymentMethodToken: 'tok_decline_expired_card',
      originalDeclineCode: 'expired_card',
    });
    const accountId = recoveryId.split('/')[1]!;
    const [event] = await stack.stores.events.list({ accountId, limit: 1 });
    if (!event) throw new Error('no event to deliver');
    const workflowId = webhookWorkflowId(event._id);
    await stack.temporal.workflow
      .getHandle(workflowId)
      .result()
      .catch(() => undefined);
    return workflowId;
  },
};

let n = 0;

/** Runs one recovery, on a new account with these settings (and gateways), to its end; returns its workflow id. */
async function recovery(
  stack: Stack,
  body: Record<string, unknown>,
  settings: Record<string, unknown> = {},
  gateways?: GatewayConfig[],
): Promise<string> {
  return recoveryOf(stack, await stack.createAccount(settings, gateways), body);
}

/** Runs one recovery of the merchant's (its first) to its end; returns its workflow id. */
async function recoveryOf(
  stack: Stack,
  merchant: Awaited<ReturnType<Stack['createAccount']>>,
  body: Record<string, unknown>,
): Promise<string> {
  n += 1;
  const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: merchant.apiKey,
    body: { amount: 2000 + n, ...body },
  });
  // A block at screening answers 403 without an id: the merchant's only recovery is that one.
  const doc =
    typeof answer.body.transactionId === 'string'
      ? await stack.stores.recoveries.find(
          merchant.account.id,
          answer.body.transactionId.replace(/^FAILED_API_/, ''),
        )
      : (await stack.stores.recoveries.page(merchant.account.id, { limit: 1 }))[0];
  if (!doc) throw new Error(`no recovery behind ${JSON.stringify(answer.body)}`);
  await stack.temporal.workflow.getHandle(doc.workflowId).result();
  return doc.workflowId;
}

/** A recovery of a new merchant's queued to a later retry (insufficient funds): its record and workflow. */
async function queuedRecovery(stack: Stack) {
  const { apiKey, account } = await stack.createAccount();
  n += 1;
  const answer = await call(stack.baseUrl, 'POST', '/api/recovery/execute', {
    key: apiKey,
    body: {
      amount: 2000 + n,
      paymentMethodToken: 'tok_decline_insufficient_funds',
      originalDeclineCode: 'insufficient_funds',
    },
  });
  if (answer.body.status !== 'queued') throw new Error(`not queued: ${JSON.stringify(answer.body)}`);
  const doc = await stack.stores.recoveries.find(account.id, String(answer.body.transactionId));
  if (!doc) throw new Error('no recovery behind the answer');
  return { doc, handle: stack.temporal.workflow.getHandle(doc.workflowId) };
}

/** A sandbox gateway named `name`, with these sandbox settings (e.g. declineAll). */
const testGateway = (name: string, credentials: Record<string, string> = {}): GatewayConfig => ({
  name,
  kind: 'test',
  test: true,
  credentials,
});

/** An account whose sweep is on, with a card on file that expires this month (so within its warning days). */
async function sweptAccount(stack: Stack): Promise<{ accountId: string }> {
  const { account } = await stack.createAccount({
    cardHealthSweep: { enabled: true, daysBeforeExpiry: 31 },
    dataRetentionDays: 90,
  });
  await stack.stores.sandbox.saveCard(
    cardOnFile(account.id, `tok_visa_sweep_${account.id}`, { now: serverClock() }),
  );
  return { accountId: account.id };
}

/** Starts the daily workflows (once), with an account for them to work on, and lets two days pass. */
let daily: Promise<{ cardHealthSweep: string; dataRetention: string }> | undefined;
function dailyWorkflowsAfterTwoDays(stack: Stack, env: TestWorkflowEnvironment) {
  daily ??= (async () => {
    const { accountId } = await sweptAccount(stack);
    const ids = await ensureDailyWorkflows(stack.temporal, stack.queues);
    // An event published now tells the outbox check (since 2026-11-26), which looks minutes later.
    await stack.events.publish(accountId, sampleEvent('recovery.success'));
    await env.sleep(2 * 86_400_000);
    return ids;
  })();
  return daily;
}

/** A recovery queued on `tok_visa` whose card-update link the customer uses; both workflows run to their end. */
async function cardUpdated(stack: Stack): Promise<{ recovery: string; linkUse: string }> {
  const { account, apiKey } = await stack.createAccount();
  const post = (path: string, body: unknown) =>
    call<{ transactionId: string; token: string }>(stack.baseUrl, 'POST', path, { key: apiKey, body });
  n += 1;
  const queued = await post('/api/recovery/execute', {
    paymentMethodToken: 'tok_visa',
    originalDeclineCode: 'insufficient_funds',
    amount: 2000 + n,
  });
  const minted = await post('/api/recovery/update-card/generate', {
    paymentMethodToken: 'tok_visa',
    transactionId: queued.body.transactionId,
  });
  const hash = sha256(minted.body.token);
  const found = await stack.stores.links.find(hash);
  if (found?.link.kind !== 'card_update') throw new Error('no card-update link');
  const outcomes = createLinkOutcomes({
    stores: stack.stores,
    temporal: stack.temporal,
    queues: stack.queues,
    events: stack.events,
    clock: serverClock,
    log: createLogger('silent', 'test'),
  });
  await outcomes.updateCard(found.link, {
    token: 'tok_mastercard',
    paymentMethodType: 'card',
    eligibleGateways: ['test'],
  });
  const doc = await stack.stores.recoveries.find(account.id, queued.body.transactionId);
  await stack.temporal.workflow.getHandle(doc!.workflowId).result();
  await stack.temporal.workflow.getHandle(linkUseWorkflowId(hash)).result();
  return { recovery: doc!.workflowId, linkUse: linkUseWorkflowId(hash) };
}

describe.runIf(process.env.RECORD_HISTORIES)('recording histories', () => {
  it(
    'runs every scenario on the time-skipping server and writes its history',
    { timeout: 600_000 },
    async () => {
      const folder = join(root, process.env.RECORD_HISTORIES!);
      mkdirSync(folder, { recursive: true });
      const env = await startTimeSkipping();
      const stack = await stackOnTimeSkipping(env);
      try {
        // Three days before next month's 15th, 10:00 UTC: insufficient funds wait for the payday.
        const now = new Date(await env.currentTimeMs());
        await skipTo(env, Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 12, 10));
        for (const [scenario, run] of Object.entries(scenarios)) {
          const workflowId = await run(stack, env);
          const history = await stack.temporal.workflow.getHandle(workflowId).fetchHistory();
          const recorded: Recorded = { scenario, workflowId, history: JSON.parse(JSON.stringify(history)) };
          writeFileSync(join(folder, `${scenario}.json`), `${JSON.stringify(recorded)}\n`);
        }
      } finally {
        await stack.close();
        await env.teardown();
      }
    },
  );
});
