import { z } from 'zod';
import { GatewayKind } from './gateway-kinds.js';
import { NetworkRules, defaultNetworkRules } from './network-rules.js';
import { CardOrigin, Currency } from './recovery-request.js';

const https = z.url({ protocol: /^https$/, error: 'must be an https:// URL' });

/** True when the URL names no user or password (`https://user:pass@host/`). */
function withoutCredentials(url: string): boolean {
  if (!URL.canParse(url)) return true; // refused as no https URL already
  const { username, password } = new URL(url);
  return username === '' && password === '';
}

// Fetch refuses a URL with credentials, so every delivery would fail, and its error (credentials and all)
// would land in the audit log. Webhooks are authenticated by their signature instead.
const webhookUrl = https.refine(
  withoutCredentials,
  'must not contain a user name or password (user:pass@): webhooks are authenticated by their signature',
);

const hostname = z
  .string()
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i,
    'must be a hostname such as pay.example.com',
  );

/** The runtime's canonical name of an IANA time zone (Europe/Paris for europe/paris), or null for none. */
function canonicalZone(tz: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

const zoneName = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/**
 * IANA time zone names, validated against the runtime's Intl database and stored as it names them. A bare
 * offset (+02:00), which newer runtimes accept, is no zone: it knows no daylight saving time.
 */
export const TimeZone = z
  .string()
  .refine(
    (tz) => zoneName.test(tz) && canonicalZone(tz) !== null,
    'must be an IANA time zone such as Europe/Berlin',
  )
  .transform((tz) => canonicalZone(tz) ?? tz);

export const CancelOffer = z.discriminatedUnion('type', [
  z.object({ type: z.literal('pause'), months: z.int().min(1).max(12) }).strict(),
  z
    .object({
      type: z.literal('discount'),
      percentOff: z.int().min(1).max(100),
      durationMonths: z.int().min(1).max(36),
    })
    .strict(),
  z
    .object({
      type: z.literal('downgrade'),
      planId: z.string().min(1).max(128),
      label: z.string().min(1).max(80),
      /** The smaller plan's price in minor units of `currency`; 0 for a free plan. */
      amount: z.int().min(0),
      /**
       * The price's currency. Optional, so offers saved before it existed still load: an offer without
       * one (or in another currency than a link's) is shown without its price, never in the wrong currency.
       */
      currency: Currency.optional(),
    })
    .strict(),
]);
export type CancelOffer = z.infer<typeof CancelOffer>;

/**
 * One configured gateway: name, kind, whether it is a test gateway, its credentials, and the card-issuing
 * countries it acquires locally (geographic routing: a card issued there goes to it first).
 */
export const GatewayConfig = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'must be lower-case letters, digits, - or _'),
    kind: GatewayKind,
    test: z.boolean().default(false),
    credentials: z.record(z.string(), z.string()).default({}),
    countries: z.array(CardOrigin).min(1).max(250).optional(),
  })
  .strict();
export type GatewayConfig = z.infer<typeof GatewayConfig>;

/** Account settings an operator may set, with the defaults of decisions.md. */
/**
 * The shortest data retention: longer than any recovery can run (retryPolicy.maxDays ≤ 60) and than the
 * reports' default 30 days, so nothing is deleted while it is still being worked on or reported.
 */
export const minRetentionDays = 90;

export const Settings = z
  .object({
    webhookUrl,
    dunningEnabled: z.boolean().default(true),
    billingCycleDay: z.int().min(1).max(31).nullable().default(null),
    timezone: TimeZone.default('UTC'),
    riskSkipThreshold: z.number().min(0).max(100).default(85),
    riskAlertThreshold: z.number().min(0).max(100).default(70),
    cancelFlow: z
      .object({ enabled: z.boolean().default(false), offers: z.array(CancelOffer).max(5).default([]) })
      .strict()
      .default({ enabled: false, offers: [] }),
    proofMode: z
      .object({ enabled: z.boolean().default(false), controlPercent: z.number().min(0).max(50).default(10) })
      .strict()
      .default({ enabled: false, controlPercent: 10 }),
    cardHealthSweep: z
      .object({ enabled: z.boolean().default(false), daysBeforeExpiry: z.int().min(1).max(90).default(30) })
      .strict()
      .default({ enabled: false, daysBeforeExpiry: 30 }),
    customDomain: hostname.nullable().default(null),
    /**
     * The merchant's own card form, for a primary gateway whose form the card-update page cannot show
     * (Braintree, Adyen): the page sends the customer there with `recoup_link=<token>`, and the merchant
     * completes the link with POST /api/recovery/update-card/complete once the card is saved.
     */
    cardFormUrl: https.nullable().default(null),
    branding: z
      .object({
        brandName: z.string().min(1).max(80).nullable().default(null),
        logoUrl: https.nullable().default(null),
        primaryColor: z
          .string()
          .regex(/^#[0-9a-f]{6}$/i, 'must be a hex colour such as #1a73e8')
          .default('#1a56db'),
      })
      .strict()
      .default({ brandName: null, logoUrl: null, primaryColor: '#1a56db' }),
    // The spec's limit is 60 a minute; an operator may raise it for an account, never lower it.
    rateLimitPerMinute: z.int().min(60).max(100_000).default(60),
    retryPolicy: z
      .object({ maxAttempts: z.int().min(1).max(20).default(8), maxDays: z.int().min(1).max(60).default(21) })
      .strict()
      .default({ maxAttempts: 8, maxDays: 21 }),
    /** The card networks' per-card attempt caps, counted across every recovery of the card. */
    networkRules: NetworkRules.default(defaultNetworkRules),
    /**
     * Days the account's records are kept (null: for ever): each day, settled recoveries (not the payments a
     * customer still owes), webhook events, pulses, hosted links and platform events older than this are
     * deleted.
     */
    dataRetentionDays: z.int().min(minRetentionDays).max(3650).nullable().default(null),
  })
  .strict();
export type Settings = z.infer<typeof Settings>;
