import { randomBytes, randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetentionResult } from '../activities/data-retention.js';
import { createActivities } from '../activities/index.js';
import { sha256 } from '../runtime/crypto.js';
import type { AdyenAuthorisationDoc } from '../store/adyen-authorisations.js';
import { collections } from '../store/collections.js';
import {
  newHmacKey,
  notification,
  postAdyenWebhook,
  signedItem,
  type ItemFields,
} from './support/adyen-webhook.js';
import { activityDeps, startStack, type Stack } from './support/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(() => stack.close());

const adyenCredentials = (extra: Record<string, string> = {}) => ({
  apiKey: `AQE${randomBytes(8).toString('hex')}`,
  environment: 'test',
  ...extra,
});

/** An account whose gateways are Adyen gateways with these extra credentials each (an hmacKey, …). */
async function adyenAccount(...gateways: Array<Record<string, string>>) {
  const { account } = await stack.createAccount(
    {},
    gateways.map((extra, i) => ({
      name: i === 0 ? 'adyen' : `adyen-${i + 1}`,
      kind: 'adyen' as const,
      test: false,
      credentials: adyenCredentials(extra),
    })),
  );
  return account.id;
}

/** A payment as Recoup makes them for the account: its attempt key is the reference. */
const payment = (accountId: string, overrides: Partial<ItemFields> = {}): ItemFields => ({
  pspReference: randomBytes(8).toString('hex').toUpperCase(),
  merchantReference: `recovery/${accountId}/${randomUUID()}/1`,
  success: true,
  ...overrides,
});

const kept = (accountId: string) =>
  stack.stores.db
    .collection<AdyenAuthorisationDoc>(collections.adyenAuthorisations)
    .find({ accountId })
    .toArray();

describe("Adyen's standard webhook: a signed AUTHORISATION is kept for the lookup", () => {
  it("is stored once per PSP reference, without the shopper, and answered Adyen's [accepted]", async () => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    const paid = payment(accountId, { value: 4900, currency: 'EUR' });
    const res = await postAdyenWebhook(stack, accountId, notification(signedItem(paid, key)));
    expect(res).toEqual({ status: 200, text: '[accepted]' });
    const docs = await kept(accountId);
    // Only the payment's result: not the card's digits and expiry (an authorised payment's reason), nor
    // anything of additionalData.
    expect(docs).toEqual([
      {
        _id: `${accountId}/${paid.pspReference}`,
        accountId,
        pspReference: paid.pspReference,
        merchantReference: paid.merchantReference,
        success: true,
        reason: null,
        value: 4900,
        currency: 'EUR',
        eventDate: '2026-11-25T15:02:11+01:00',
        receivedAt: expect.any(Date),
      },
    ]);
  });

  it('takes a batch larger than the API’s 64 KiB body limit, as platforms’ intakes do', async () => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    const items = Array.from({ length: 120 }, () => signedItem(payment(accountId), key));
    const body = JSON.stringify(notification(...items));
    expect(body.length).toBeGreaterThan(64 * 1024);
    expect(await postAdyenWebhook(stack, accountId, body)).toEqual({ status: 200, text: '[accepted]' });
    expect(await kept(accountId)).toHaveLength(120);
  });

  it("Adyen's resend of the same notification is accepted again and keeps one document", async () => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    const body = notification(signedItem(payment(accountId), key));
    const answers = [
      await postAdyenWebhook(stack, accountId, body),
      await postAdyenWebhook(stack, accountId, body),
    ];
    expect(answers).toEqual([
      { status: 200, text: '[accepted]' },
      { status: 200, text: '[accepted]' },
    ]);
    expect(await kept(accountId)).toHaveLength(1);
  });

  it('a refusal keeps its reason; a reference over 80 characters is its SHA-256, which is kept too', async () => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    const refused = payment(accountId, { success: false, reason: 'Not enough balance' });
    const hashed = payment(accountId, {
      merchantReference: sha256(`recovery/${accountId}/${'k'.repeat(80)}/1`),
    });
    const res = await postAdyenWebhook(
      stack,
      accountId,
      notification(signedItem(refused, key), signedItem(hashed, key)),
    );
    expect(res.status).toBe(200);
    const docs = await kept(accountId);
    expect(docs.map((d) => [d.pspReference, d.success, d.reason])).toEqual(
      expect.arrayContaining([
        [refused.pspReference, false, 'Not enough balance'],
        [hashed.pspReference, true, null],
      ]),
    );
    expect(docs).toHaveLength(2);
  });

  it("the second Adyen gateway's key verifies a notification sent to the account's one URL", async () => {
    const [first, second] = [newHmacKey(), newHmacKey()];
    const accountId = await adyenAccount({ hmacKey: first }, { hmacKey: second });
    const res = await postAdyenWebhook(
      stack,
      accountId,
      notification(signedItem(payment(accountId), second)),
    );
    expect(res).toEqual({ status: 200, text: '[accepted]' });
    expect(await kept(accountId)).toHaveLength(1);
  });
});

describe("Adyen's standard webhook: what is acknowledged and ignored", () => {
  it.each([
    ['a CAPTURE', { eventCode: 'CAPTURE' }],
    ['a REPORT_AVAILABLE', { eventCode: 'REPORT_AVAILABLE', value: 0 }],
    ["the merchant's own checkout payment", { merchantReference: 'order-2026-0042' }],
    ["another account's recovery", { merchantReference: `recovery/acct_other/${randomUUID()}/1` }],
  ])('%s is answered [accepted] and not kept', async (_what, overrides) => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    const res = await postAdyenWebhook(
      stack,
      accountId,
      notification(signedItem(payment(accountId, overrides), key)),
    );
    expect(res).toEqual({ status: 200, text: '[accepted]' });
    expect(await kept(accountId)).toEqual([]);
  });
});

describe("Adyen's standard webhook: security", () => {
  it('an item signed with another key, or changed after signing, is 401 and nothing of the request is kept', async () => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    const good = signedItem(payment(accountId), key);
    const forged = signedItem(payment(accountId), newHmacKey());
    const flipped = { ...signedItem(payment(accountId, { success: false }), key), success: 'true' };
    const unsigned = { ...signedItem(payment(accountId), key), additionalData: {} };
    for (const bad of [forged, flipped, unsigned]) {
      const res = await postAdyenWebhook(stack, accountId, notification(good, bad));
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text)).toEqual({ error: 'Invalid Adyen HMAC signature or credentials' });
    }
    expect(await kept(accountId)).toEqual([]);
  });

  it("another account's HMAC key does not verify at this account's URL", async () => {
    const [mine, theirs] = [newHmacKey(), newHmacKey()];
    const accountId = await adyenAccount({ hmacKey: mine });
    const otherId = await adyenAccount({ hmacKey: theirs });
    const res = await postAdyenWebhook(
      stack,
      accountId,
      notification(signedItem(payment(accountId), theirs)),
    );
    expect(res.status).toBe(401);
    expect(await kept(accountId)).toEqual([]);
    expect(await kept(otherId)).toEqual([]);
  });

  it('with a basic-auth pair configured, a signed notification needs the pair too', async () => {
    const key = newHmacKey();
    const pair = {
      notificationUsername: 'adyen-hooks',
      notificationPassword: randomBytes(12).toString('hex'),
    };
    const accountId = await adyenAccount({ hmacKey: key, ...pair });
    const basic = (user: string, pass: string) => ({
      authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`,
    });
    const body = notification(signedItem(payment(accountId), key));
    const refused = [
      await postAdyenWebhook(stack, accountId, body),
      await postAdyenWebhook(stack, accountId, body, basic(pair.notificationUsername, 'wrong')),
    ];
    expect(refused.map((r) => r.status)).toEqual([401, 401]);
    expect(await kept(accountId)).toEqual([]);
    const res = await postAdyenWebhook(
      stack,
      accountId,
      body,
      basic(pair.notificationUsername, pair.notificationPassword),
    );
    expect(res).toEqual({ status: 200, text: '[accepted]' });
    expect(await kept(accountId)).toHaveLength(1);
  });

  it('an unknown client, or one with no Adyen gateway that has an hmacKey, is 404', async () => {
    const key = newHmacKey();
    const withoutKey = await adyenAccount({});
    const { account: onTestGateway } = await stack.createAccount();
    const body = notification(signedItem(payment('acct_unknown'), key));
    const answers = await Promise.all(
      ['acct_unknown', withoutKey, onTestGateway.id].map((id) => postAdyenWebhook(stack, id, body)),
    );
    expect(answers.map((a) => [a.status, JSON.parse(a.text) as unknown])).toEqual([
      [404, { error: 'Unknown client' }],
      [404, { error: 'No Adyen gateway of this client has an hmacKey' }],
      [404, { error: 'No Adyen gateway of this client has an hmacKey' }],
    ]);
  });

  it('a body that is not JSON, or not shaped as Adyen sends it, is 400 naming what is wrong', async () => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    const item = signedItem(payment(accountId), key);
    const notJson = await postAdyenWebhook(stack, accountId, '[accepted]');
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.text)).toMatchObject({ error: 'Malformed JSON body' });
    for (const [body, field] of [
      [{ live: 'false' }, 'notificationItems'],
      [{ notificationItems: [] }, 'notificationItems'],
      [notification({ ...item, success: true }), 'notificationItems.0.NotificationRequestItem.success'],
      [
        notification({ ...item, amount: { value: '49.00', currency: 'EUR' } }),
        'notificationItems.0.NotificationRequestItem.amount.value',
      ],
    ] as const) {
      const res = await postAdyenWebhook(stack, accountId, body);
      expect(res.status, field).toBe(400);
      expect(JSON.parse(res.text)).toMatchObject({
        error: 'Validation failed',
        details: { [field]: expect.any(Array) },
      });
    }
    expect(await kept(accountId)).toEqual([]);
  });
});

describe('Adyen AUTHORISATION results: retention and closure', () => {
  it('the daily purge deletes those received over 90 days ago in every account, whatever its retention', async () => {
    const key = newHmacKey();
    const [keepsAll, keeps400] = [await adyenAccount({ hmacKey: key }), await adyenAccount({ hmacKey: key })];
    await stack.stores.accounts.updateSettings(keeps400, {
      ...(await stack.stores.accounts.find(keeps400))!.settings,
      dataRetentionDays: 400,
    });
    for (const accountId of [keepsAll, keeps400])
      await postAdyenWebhook(stack, accountId, notification(signedItem(payment(accountId), key)));
    const day = 86_400_000;
    const activities = createActivities(activityDeps(stack));
    const purge = (daysOn: number) =>
      new MockActivityEnvironment().run<
        [number],
        RetentionResult,
        (asOf: number) => Promise<RetentionResult>
      >((asOf) => activities.purgeExpiredData({ asOf }), Date.now() + daysOn * day);
    expect((await purge(89)).adyenAuthorisations).toBe(0);
    expect([...(await kept(keepsAll)), ...(await kept(keeps400))]).toHaveLength(2);
    expect((await purge(91)).adyenAuthorisations).toBeGreaterThanOrEqual(2);
    expect([...(await kept(keepsAll)), ...(await kept(keeps400))]).toEqual([]);
  });

  it('closing the account deletes its results with everything else', async () => {
    const key = newHmacKey();
    const accountId = await adyenAccount({ hmacKey: key });
    await postAdyenWebhook(stack, accountId, notification(signedItem(payment(accountId), key)));
    expect(await kept(accountId)).toHaveLength(1);
    await stack.stores.deleteAccountData(accountId);
    expect(await kept(accountId)).toEqual([]);
  });
});
