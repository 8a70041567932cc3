import { beforeAll, describe, expect, it } from 'vitest';
import { collections } from '../store/collections.js';
import { createPulseStore, type PulseDoc } from '../store/pulses.js';
import { scratchDb } from './support/scratch-db.js';

// The organic-success pulses a report reads are those of the account's current mode: the sandbox's
// (logged in test mode, `isSimulated`) or the live ones (those logged before the mark was kept too).

const { db } = scratchDb('pulses');
let pulses: ReturnType<typeof createPulseStore>;
const accountId = 'acct_pulses';
const at = new Date('2026-11-20T12:00:00Z');
const from = new Date('2026-11-01T00:00:00Z');
const to = new Date('2026-12-01T00:00:00Z');
const email = 'ana@example.com';

beforeAll(async () => {
  pulses = createPulseStore(db());
  const base = { accountId, merchantTransactionId: null, amount: 1000, currency: 'USD', occurredAt: at };
  for (const isSimulated of [true, undefined] as const) {
    const mode = isSimulated ? { isSimulated } : {};
    await pulses.log({ ...base, ...mode, customerEmail: email }, at);
    await pulses.log(
      { ...base, ...mode, customerEmail: null, paysTransactionId: `rec_${String(isSimulated)}` },
      at,
    );
  }
  // Logged before pulses kept their mode: live.
  await db()
    .collection<PulseDoc>(collections.pulses)
    .insertOne({ _id: 'pulse_old', ...base, customerEmail: null, createdAt: at });
});

describe('pulses by mode', () => {
  it('counts the sandbox’s in test mode, the live ones (and the unmarked) once live', async () => {
    expect(await pulses.countBetween(accountId, true, from, to)).toBe(2);
    expect(await pulses.countBetween(accountId, false, from, to)).toBe(3);
  });

  it('tells a customer paid on their own by the pulses of the mode read alone', async () => {
    expect(await pulses.paidBy(accountId, true, [email], from, to)).toEqual(new Map([[email, [at]]]));
    expect(await pulses.paidBy(accountId, false, [email], from, to)).toEqual(new Map([[email, [at]]]));
    await pulses.log(
      {
        accountId,
        merchantTransactionId: 'later',
        amount: 5,
        currency: 'USD',
        customerEmail: 'sandbox@example.com',
        occurredAt: at,
        isSimulated: true,
      },
      at,
    );
    expect((await pulses.paidBy(accountId, false, ['sandbox@example.com'], from, to)).size).toBe(0);
    expect((await pulses.paidBy(accountId, true, ['sandbox@example.com'], from, to)).size).toBe(1);
  });

  it('matches named pulses of the mode read alone', async () => {
    expect(await pulses.namedBetween(accountId, true, from, to)).toEqual([{ pays: 'rec_true', at }]);
    expect(await pulses.namedBetween(accountId, false, from, to)).toEqual([{ pays: 'rec_undefined', at }]);
  });

  it('keeps the sandbox’s merchant ids apart from the live ones: the same id logs one pulse in each mode', async () => {
    const pulse = {
      accountId,
      merchantTransactionId: 'order_7',
      amount: 700,
      currency: 'USD',
      customerEmail: null,
      occurredAt: at,
    };
    const sandbox = await pulses.log({ ...pulse, isSimulated: true }, at);
    const live = await pulses.log(pulse, at);
    expect(live._id).not.toBe(sandbox._id);
    expect((await pulses.log({ ...pulse, isSimulated: true }, at))._id).toBe(sandbox._id);
    expect((await pulses.log(pulse, at))._id).toBe(live._id);
  });
});
