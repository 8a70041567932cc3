import { describe, expect, it } from 'vitest';
import { EventPayloadSchema, StoredEventSchema } from '../domain/events.js';
import { deliveryBlock, isHttpsUrl } from '../domain/webhooks.js';
import { signWebhook, verifyWebhookSignature } from '../runtime/webhook-signature.js';
import { sampleEvent, sampleEvents } from './support/sample-events.js';

describe('the event catalogue', () => {
  it.each(sampleEvents.map((e) => [e.event, e] as const))('accepts a valid %s', (_, payload) => {
    expect(EventPayloadSchema.safeParse(payload).success).toBe(true);
    const stored = { ...payload, eventId: 'evt_1', createdAt: '2026-03-01T12:00:00.000Z' };
    expect(StoredEventSchema.safeParse(stored).success).toBe(true);
  });

  const success = sampleEvent('recovery.success');
  const expiring = sampleEvent('card.expiring_soon');
  const { expiryMonth: _m, expiryYear: _y, ...noExpiry } = expiring;
  it.each([
    ['a fractional amount', { ...success, amount: 49.99 }, 'amount'],
    ['an amount as a string', { ...success, amount: '4999' }, 'amount'],
    ['a lower-case currency', { ...success, currency: 'usd' }, 'currency'],
    [
      'a missing serviceTransactionId',
      { ...success, serviceTransactionId: undefined },
      'serviceTransactionId',
    ],
    ['a field the spec does not name', { ...success, transactionId: 'x' }, ''],
    ['an unknown strategyUsed', { ...success, strategyUsed: 'magic' }, 'strategyUsed'],
    ['an unknown event', { ...success, event: 'recovery.maybe' }, 'event'],
    ['a card.expiring_soon without expiry', noExpiry, 'expiryMonth'],
    ['a pre-emptive card.expiring_soon without its link', { ...expiring, preemptive: true }, 'cardUpdateUrl'],
    [
      'a churn event whose outcome contradicts its name',
      { ...sampleEvent('churn.flow.paused'), outcome: 'cancelled' },
      'outcome',
    ],
    [
      'customerAuthRequired false',
      { ...sampleEvent('recovery.authentication_required'), customerAuthRequired: false },
      'customerAuthRequired',
    ],
  ])('refuses %s', (_, payload, field) => {
    const parsed = EventPayloadSchema.safeParse(payload);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toContain(field);
  });

  it('a received body must carry eventId and createdAt', () => {
    expect(StoredEventSchema.safeParse(success).success).toBe(false);
  });
});

describe('signatures', () => {
  const body = '{"event":"recovery.success","amount":4999}';
  const secret = 'whsec_test_secret';
  // openssl dgst -sha256 -hmac whsec_test_secret over the same bytes:
  const expected = '86f2daa240e9222ad482e5a0404a4a38bb4dd6582aec635700fa309ff6e330b1';

  it('are lower-case hex HMAC-SHA256 of the raw bytes keyed with the whole whsec_ secret', () => {
    expect(signWebhook(body, secret)).toBe(expected);
    expect(signWebhook(Buffer.from(body), secret)).toBe(expected);
  });

  it('verify only the exact bytes, the right secret and a well-formed header', () => {
    expect(verifyWebhookSignature(Buffer.from(body), expected, secret)).toBe(true);
    expect(verifyWebhookSignature(`${body} `, expected, secret)).toBe(false);
    expect(verifyWebhookSignature(body, expected, 'whsec_other')).toBe(false);
    expect(verifyWebhookSignature(body, expected.toUpperCase(), secret)).toBe(false);
    expect(verifyWebhookSignature(body, `sha256=${expected}`, secret)).toBe(false);
    expect(verifyWebhookSignature(body, undefined, secret)).toBe(false);
  });
});

describe('who receives what', () => {
  const settings = { dunningEnabled: true, webhookUrl: 'https://merchant.example/hooks' };
  it.each([
    ['recovery.failed', settings, null],
    ['recovery.failed', { ...settings, dunningEnabled: false }, 'suppressed'],
    ['recovery.success', { ...settings, dunningEnabled: false }, null],
    ['recovery.blocked', { ...settings, dunningEnabled: false }, null],
    ['recovery.success', { ...settings, webhookUrl: 'http://merchant.example/hooks' }, 'undeliverable'],
    ['recovery.success', { ...settings, webhookUrl: 'not a url' }, 'undeliverable'],
  ] as const)('%s with %j is %s', (event, s, expected) => {
    expect(deliveryBlock(event, s)).toBe(expected);
  });

  it('only absolute https:// URLs are https', () => {
    expect(isHttpsUrl('https://127.0.0.1:8443/x')).toBe(true);
    expect(isHttpsUrl('HTTPS://EXAMPLE.COM')).toBe(true);
    expect(isHttpsUrl('//example.com')).toBe(false);
    expect(isHttpsUrl('ftp://example.com')).toBe(false);
  });
});
