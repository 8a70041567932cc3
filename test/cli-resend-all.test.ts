import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhooksCommand } from '../cli/commands/webhooks.js';
import type { CliContext } from '../cli/context.js';
import type { EventQuery, EventRecord } from '../store/events.js';
import { cliContextOf, cliEnvOf, runCliIntoClosedPipe } from './support/cli.js';
import { storeEvent } from './support/events.js';
import { startStack, type Stack } from './support/stack.js';

// In this process, on the stack's stores: the test reaches into what `webhooks resend-all` reads. No worker:
// the resent deliveries are started on Temporal, never run.
let stack: Stack;
const masterKey = randomBytes(32);
beforeAll(async () => {
  stack = await startStack({ worker: false, masterKey });
});
afterAll(() => stack.close());

/** `count` events of the account whose delivery failed, one a minute from two hours ago, oldest first. */
async function failedEvents(accountId: string, count: number): Promise<string[]> {
  const start = Date.now() - 7_200_000;
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const createdAt = new Date(start + i * 60_000);
    const attempts = [{ attempt: 1, at: createdAt, statusCode: 503, error: null, latencyMs: 5 }];
    ids.push(
      await storeEvent(stack.stores.events, accountId, {
        type: 'card.updated',
        createdAt,
        status: 'failed',
        deliveries: [{ deliveryId: 'initial', startedAt: createdAt, attempts }],
      }),
    );
  }
  return ids;
}

/** The context with the audit log's listing replaced: `list(query, call)` for the `call`-th listing (from 1). */
function listingThrough(
  ctx: CliContext,
  list: (query: EventQuery | undefined, call: number) => Promise<EventRecord[]>,
): CliContext {
  let calls = 0;
  return {
    ...ctx,
    stores: { ...ctx.stores, events: { ...ctx.stores.events, list: (q) => list(q, ++calls) } },
  };
}

describe('recoup webhooks resend-all into a pipe its reader has closed (`… | head -1`)', () => {
  it('resends every batch all the same, and exits 0 without a stack trace', async () => {
    const { account } = await stack.createAccount();
    const ids = await failedEvents(account.id, 101);
    const run = await runCliIntoClosedPipe(
      ['webhooks', 'resend-all', account.id],
      cliEnvOf(stack, masterKey),
    );
    expect(run).toEqual({ code: 0, stderr: '' });
    const last = await stack.stores.events.get(ids[100] ?? '');
    expect(last?.deliveries.map((d) => d.deliveryId)).toEqual(['initial', 'resend-1']);
  });
});

describe('recoup webhooks resend-all, batch by batch', () => {
  it('prints each batch as it completes, and carries on past its last event even once that is erased', async () => {
    const { account } = await stack.createAccount();
    const ids = await failedEvents(account.id, 101);
    const lines: string[] = [];
    // The first batch's last event is erased while the batch runs (a customer's erasure, data retention):
    // it is skipped, and the next batch must still start after it.
    const ctx = listingThrough(cliContextOf(stack, lines), async (query, call) => {
      const records = await stack.stores.events.list(query);
      if (call === 1) await stack.stores.events.remove([ids[99] ?? '']);
      return records;
    });
    await webhooksCommand(['resend-all', account.id])(ctx);

    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Resent 99 and skipped 1 event\\(s\\), oldest first through ${ids[99]} \\(created \\S+\\)\\.$`,
        ),
      ),
      `Skipped ${ids[99]}: No event ${ids[99]}`,
      expect.stringMatching(
        new RegExp(
          `^Resent 1 and skipped 0 event\\(s\\), oldest first through ${ids[100]} \\(created \\S+\\)\\.$`,
        ),
      ),
      `Resent 100 failed event(s) of ${account.id}, each as a new delivery.`,
      `Follow them with: recoup webhooks list --account ${account.id} --status pending`,
    ]);
    const last = await stack.stores.events.get(ids[100] ?? '');
    expect(last?.deliveries.map((d) => d.deliveryId)).toEqual(['initial', 'resend-1']);
  });

  it('a batch that fails leaves the record of the ones before on stdout (--json), then the error', async () => {
    const { account } = await stack.createAccount();
    const ids = await failedEvents(account.id, 101);
    const lines: string[] = [];
    const ctx = listingThrough(cliContextOf(stack, lines), (query, call) =>
      call === 2 ? Promise.reject(new Error('MongoDB went away')) : stack.stores.events.list(query),
    );
    await expect(webhooksCommand(['resend-all', account.id, '--json'])(ctx)).rejects.toThrow(
      'MongoDB went away',
    );
    expect(lines).toHaveLength(1);
    const done = JSON.parse(lines[0] ?? '') as { resent: Array<{ eventId: string }>; skipped: unknown[] };
    expect(done.resent.map((r) => r.eventId)).toEqual(ids.slice(0, 100));
    expect(done.skipped).toEqual([]);
  });
});
