import { describe, expect, it } from 'vitest';
import { attemptKeyOf, recoveryWorkflowId } from '../domain/recovery.js';
import { cardKeyOf, sha256 } from '../runtime/crypto.js';
import { deleteAccountDocuments } from '../store/account-data.js';
import { collections } from '../store/collections.js';
import { scratchDb } from './support/scratch-db.js';

const { db } = scratchDb('account_data');

/**
 * The documents an account leaves in the collections whose `_id` embeds it (as each store builds the id),
 * with `key` standing for what the merchant or a platform chose: an idempotency key, an event id; and two
 * of those whose `_id` embeds it but that carry it as `accountId` as well (an attempt's records).
 */
function idsOf(accountId: string, key: string): Array<[string, string, string?]> {
  const card = cardKeyOf(accountId, 'tok_visa');
  const email = sha256('ann@example.com');
  const attempt = attemptKeyOf(recoveryWorkflowId(accountId, key), 1);
  return [
    [collections.idempotencyKeys, `${accountId}:${key}`],
    [collections.customerRecoveries, `${accountId}:${email.slice(0, 32)}:1`],
    [collections.blockedCards, card],
    [collections.velocity, `${accountId}:${card}:2500:USD:1`],
    [collections.rateLimits, `execute:${accountId}:secret:1767225600000:1`],
    [collections.cardBudgets, `${card}:1`],
    [collections.learning, accountId],
    [collections.retentionNotices, `${accountId}:${email}:1`],
    [collections.riskCalibration, accountId],
    [collections.holdouts, `${accountId}:${email}`],
    [collections.sandboxCharges, `test|${attempt}`],
    [collections.connectorEvents, `${accountId}/chargebee/${key}`],
    [collections.adyenAuthorisations, `${accountId}/${key}`],
    [collections.erasures, `${accountId}:${sha256(key)}`],
    [collections.attempts, attempt, accountId],
    [collections.attemptSends, attempt, accountId],
  ];
}

async function insertAll(ids: Array<[string, string, string?]>) {
  for (const [name, _id, accountId] of ids)
    await db()
      .collection<{ _id: string; accountId?: string }>(name)
      .insertOne(accountId ? { _id, accountId } : { _id });
}

async function remaining(ids: Array<[string, string, string?]>): Promise<string[]> {
  const found: string[] = [];
  for (const [name, _id] of ids)
    if (await db().collection<{ _id: string }>(name).findOne({ _id })) found.push(`${name} ${_id}`);
  return found;
}

describe('deleting the documents of a closed account', () => {
  it('deletes those whose id embeds the account where each collection puts it', async () => {
    const ids = idsOf('acct_leaving', 'order-1');
    await insertAll(ids);
    await deleteAccountDocuments(db(), 'acct_leaving');
    expect(await remaining(ids)).toEqual([]);
  });

  it.each([
    ['after a colon', 'renewal:acct_target'],
    ['between slashes', 'batch/acct_target/7'],
    ['after a bar', 'import|acct_target'],
    ['as the whole key', 'acct_target'],
  ])(
    'keeps another account’s documents whose merchant-chosen key has the account’s id %s',
    async (_where, key) => {
      const others = idsOf('acct_staying', key);
      await insertAll(others);
      await deleteAccountDocuments(db(), 'acct_target');
      expect(await remaining(others)).toHaveLength(others.length);
      await deleteAccountDocuments(db(), 'acct_staying');
      expect(await remaining(others)).toEqual([]);
    },
  );
});
