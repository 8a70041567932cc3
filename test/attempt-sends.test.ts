import { describe, expect, it } from 'vitest';
import { AttemptAbandonedError, createAttemptSendStore } from '../store/attempt-sends.js';
import { scratchDb } from './support/scratch-db.js';

const { db } = scratchDb('attempt_sends');

const start = new Date(Date.UTC(2026, 5, 1, 9));
const later = (ms: number) => new Date(start.getTime() + ms);
const day = 86_400_000;

describe("an attempt's first-sent record", () => {
  it('keeps the first try’s time: a worker replaying the workflow 45 s later reads it back', async () => {
    const sends = createAttemptSendStore(db());
    expect(await sends.firstSent('acct_a', 'recovery/acct_a/k1/1', start)).toEqual(start);
    expect(await sends.firstSent('acct_a', 'recovery/acct_a/k1/1', later(45_000))).toEqual(start);
    // The next attempt of the recovery is sent at its own time.
    expect(await sends.firstSent('acct_a', 'recovery/acct_a/k1/2', later(day))).toEqual(later(day));
  });

  it('is made once when tries race: every one of them reads the same time', async () => {
    const sends = createAttemptSendStore(db());
    const times = await Promise.all(
      Array.from({ length: 8 }, (_, i) => sends.firstSent('acct_a', 'recovery/acct_a/k2/1', later(i))),
    );
    expect(new Set(times.map((t) => t.getTime())).size).toBe(1);
  });

  it('is purged once older than the cutoff, in every account; a purged attempt would be recorded afresh', async () => {
    const sends = createAttemptSendStore(db());
    await sends.firstSent('acct_old', 'recovery/acct_old/k/1', start);
    await sends.firstSent('acct_old', 'recovery/acct_old/k/2', later(100 * day));
    await sends.firstSent('acct_other', 'recovery/acct_other/k/1', start);
    // The earlier tests' records, all sent before the cutoff, go too.
    expect(await sends.purgeBefore(later(90 * day))).toBeGreaterThanOrEqual(2);
    expect(await sends.firstSent('acct_other', 'recovery/acct_other/k/1', later(200 * day))).toEqual(
      later(200 * day),
    );
    expect(await sends.firstSent('acct_old', 'recovery/acct_old/k/1', later(200 * day))).toEqual(
      later(200 * day),
    );
    expect(await sends.firstSent('acct_old', 'recovery/acct_old/k/2', later(200 * day))).toEqual(
      later(100 * day),
    );
  });
});

describe('giving an attempt up before it is sent (a stop after its decision)', () => {
  it('gives up an attempt never sent: no worker may send it afterwards, not even one still holding it', async () => {
    const sends = createAttemptSendStore(db());
    expect(await sends.abandon('acct_a', 'recovery/acct_a/s1/1', later(300 * day))).toBe(true);
    await expect(sends.firstSent('acct_a', 'recovery/acct_a/s1/1', later(300 * day))).rejects.toThrow(
      AttemptAbandonedError,
    );
    // A replayed stop gives it up again, with the same answer; it was never sent.
    expect(await sends.abandon('acct_a', 'recovery/acct_a/s1/1', later(300 * day))).toBe(true);
    expect(await sends.wasSent('recovery/acct_a/s1/1')).toBe(false);
  });

  it('does not give up an attempt that was sent: it is settled, and sent again under its key if need be', async () => {
    const sends = createAttemptSendStore(db());
    await sends.firstSent('acct_a', 'recovery/acct_a/s2/1', later(300 * day));
    expect(await sends.abandon('acct_a', 'recovery/acct_a/s2/1', later(301 * day))).toBe(false);
    expect(await sends.wasSent('recovery/acct_a/s2/1')).toBe(true);
    expect(await sends.firstSent('acct_a', 'recovery/acct_a/s2/1', later(302 * day))).toEqual(
      later(300 * day),
    );
  });

  it('agrees with a slow worker sending it at the same moment: either it is sent, or it is given up', async () => {
    const sends = createAttemptSendStore(db());
    for (let i = 0; i < 6; i += 1) {
      const key = `recovery/acct_a/s3/${i}`;
      const [sent, abandoned] = await Promise.all([
        sends.firstSent('acct_a', key, later(300 * day)).then(
          () => true,
          () => false,
        ),
        sends.abandon('acct_a', key, later(300 * day)),
      ]);
      expect(sent).toBe(!abandoned);
    }
  });
});

describe('the payment a lookup found pending', () => {
  it('is kept on the attempt’s record, the first id only, and read back by any worker; other attempts have none', async () => {
    const sends = createAttemptSendStore(db());
    const key = 'recovery/acct_a/p1/1';
    await sends.firstSent('acct_a', key, later(400 * day));
    expect(await sends.paymentIdOf('acct_a', key)).toBeNull();
    await sends.notePaymentId('acct_a', key, 'CAPTURE1');
    await sends.notePaymentId('acct_a', key, 'CAPTURE2');
    // A restarted worker (another store on the same database) reads the same id.
    expect(await createAttemptSendStore(db()).paymentIdOf('acct_a', key)).toBe('CAPTURE1');
    expect(await sends.paymentIdOf('acct_b', key)).toBeNull();
    expect(await sends.paymentIdOf('acct_a', 'recovery/acct_a/p1/2')).toBeNull();
    // The record still says when the attempt was first sent.
    expect(await sends.firstSent('acct_a', key, later(401 * day))).toEqual(later(400 * day));
  });
});
