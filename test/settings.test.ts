import { describe, expect, it } from 'vitest';
import { Settings } from '../domain/settings.js';

// dataRetentionDays and networkRules have their own tables (data-retention, network-rules).
const webhookUrl = 'https://merchant.example/hooks';
const ok = 'ok';

/** A settings object and what the schema makes of it: `ok`, or the fields it refuses (dot paths). */
type Row = [settings: Record<string, unknown>, verdict: string];

function verdictOn(settings: Record<string, unknown>): string {
  const parsed = Settings.safeParse({ webhookUrl, ...settings });
  if (parsed.success) return ok;
  return parsed.error.issues
    .map((issue) =>
      [...issue.path, ...(issue.code === 'unrecognized_keys' ? issue.keys : [])].map(String).join('.'),
    )
    .join(', ');
}

/** One it per row: the schema's verdict on those settings. */
function verdicts(rows: Row[]): void {
  it.each(rows)('%j → %s', (settings, verdict) => expect(verdictOn(settings)).toBe(verdict));
}

describe('defaults', () => {
  it("fills in decisions.md's default for every setting left out", () => {
    expect(Settings.parse({ webhookUrl })).toMatchObject({
      dunningEnabled: true,
      billingCycleDay: null,
      timezone: 'UTC',
      riskSkipThreshold: 85,
      riskAlertThreshold: 70,
      cancelFlow: { enabled: false, offers: [] },
      proofMode: { enabled: false, controlPercent: 10 },
      cardHealthSweep: { enabled: false, daysBeforeExpiry: 30 },
      customDomain: null,
      cardFormUrl: null,
      branding: { brandName: null, logoUrl: null, primaryColor: '#1a56db' },
      rateLimitPerMinute: 60,
      retryPolicy: { maxAttempts: 8, maxDays: 21 },
    });
  });

  it.each<[keyof Settings, Record<string, unknown>, unknown]>([
    ['retryPolicy', { maxDays: 30 }, { maxAttempts: 8, maxDays: 30 }],
    ['proofMode', { enabled: true }, { enabled: true, controlPercent: 10 }],
    ['cardHealthSweep', { enabled: true }, { enabled: true, daysBeforeExpiry: 30 }],
    ['cancelFlow', { enabled: true }, { enabled: true, offers: [] }],
    ['branding', { brandName: 'Acme' }, { brandName: 'Acme', logoUrl: null, primaryColor: '#1a56db' }],
  ])('%s %j keeps the defaults of the fields left out', (group, given, expected) => {
    expect(Settings.parse({ webhookUrl, [group]: given })[group]).toEqual(expected);
  });
});

describe('webhookUrl (required), cardFormUrl and branding.logoUrl: https only', () => {
  verdicts([
    [{ webhookUrl: undefined }, 'webhookUrl'],
    [{ webhookUrl: 'http://merchant.example/hooks' }, 'webhookUrl'],
    [{ webhookUrl: 'ftp://merchant.example/hooks' }, 'webhookUrl'],
    [{ webhookUrl: 'merchant.example/hooks' }, 'webhookUrl'],
    // Fetch refuses URLs with credentials: every delivery would fail, and log them in its error.
    [{ webhookUrl: 'https://user:pass@merchant.example/hooks' }, 'webhookUrl'],
    [{ webhookUrl: 'https://user@merchant.example/hooks' }, 'webhookUrl'],
    [{ webhookUrl: 'https://:pass@merchant.example/hooks' }, 'webhookUrl'],
    [{ cardFormUrl: 'https://merchant.example/card' }, ok],
    [{ cardFormUrl: 'http://merchant.example/card' }, 'cardFormUrl'],
    [{ branding: { logoUrl: 'https://merchant.example/logo.png' } }, ok],
    [{ branding: { logoUrl: 'http://merchant.example/logo.png' } }, 'branding.logoUrl'],
  ]);

  it('says why a webhookUrl with credentials is refused', () => {
    const parsed = Settings.safeParse({ webhookUrl: 'https://user:pass@merchant.example/hooks' });
    expect(parsed.error?.issues.map((i) => i.message)).toEqual([
      expect.stringContaining('must not contain a user name or password'),
    ]);
  });
});

describe('timezone: an IANA zone', () => {
  verdicts([
    [{ timezone: 'Europe/Paris' }, ok],
    [{ timezone: 'America/Argentina/Buenos_Aires' }, ok],
    [{ timezone: 'Etc/GMT+2' }, ok],
    [{ timezone: 'Mars/Olympus' }, 'timezone'],
    [{ timezone: 'GMT+2' }, 'timezone'],
    [{ timezone: '' }, 'timezone'],
    [{ timezone: '+02:00' }, 'timezone'],
  ]);

  it('is stored as the runtime names it', () => {
    expect(Settings.parse({ webhookUrl, timezone: 'europe/paris' }).timezone).toBe('Europe/Paris');
    expect(Settings.parse({ webhookUrl, timezone: 'utc' }).timezone).toBe('UTC');
  });
});

describe('billingCycleDay: a whole day 1–31, or none', () => {
  verdicts([
    [{ billingCycleDay: 1 }, ok],
    [{ billingCycleDay: 31 }, ok],
    [{ billingCycleDay: null }, ok],
    [{ billingCycleDay: 0 }, 'billingCycleDay'],
    [{ billingCycleDay: 32 }, 'billingCycleDay'],
    [{ billingCycleDay: 1.5 }, 'billingCycleDay'],
  ]);
});

describe('riskSkipThreshold and riskAlertThreshold: 0–100', () => {
  verdicts([
    [{ riskSkipThreshold: 0, riskAlertThreshold: 0 }, ok],
    [{ riskSkipThreshold: 100, riskAlertThreshold: 100 }, ok],
    [{ riskSkipThreshold: -1 }, 'riskSkipThreshold'],
    [{ riskSkipThreshold: 101 }, 'riskSkipThreshold'],
    [{ riskAlertThreshold: -1 }, 'riskAlertThreshold'],
    [{ riskAlertThreshold: 101 }, 'riskAlertThreshold'],
  ]);
});

describe('retryPolicy: 1–20 attempts over 1–60 days', () => {
  verdicts([
    [{ retryPolicy: { maxAttempts: 1, maxDays: 1 } }, ok],
    [{ retryPolicy: { maxAttempts: 20, maxDays: 60 } }, ok],
    [{ retryPolicy: { maxAttempts: 0 } }, 'retryPolicy.maxAttempts'],
    [{ retryPolicy: { maxAttempts: 21 } }, 'retryPolicy.maxAttempts'],
    [{ retryPolicy: { maxAttempts: 2.5 } }, 'retryPolicy.maxAttempts'],
    [{ retryPolicy: { maxDays: 0 } }, 'retryPolicy.maxDays'],
    [{ retryPolicy: { maxDays: 61 } }, 'retryPolicy.maxDays'],
  ]);
});

describe('cardHealthSweep: 1–90 days before expiry', () => {
  verdicts([
    [{ cardHealthSweep: { enabled: true, daysBeforeExpiry: 1 } }, ok],
    [{ cardHealthSweep: { enabled: true, daysBeforeExpiry: 90 } }, ok],
    [{ cardHealthSweep: { daysBeforeExpiry: 0 } }, 'cardHealthSweep.daysBeforeExpiry'],
    [{ cardHealthSweep: { daysBeforeExpiry: 91 } }, 'cardHealthSweep.daysBeforeExpiry'],
    [{ cardHealthSweep: { daysBeforeExpiry: 7.5 } }, 'cardHealthSweep.daysBeforeExpiry'],
  ]);
});

describe('cancelFlow offers: pause, discount or downgrade, at most 5', () => {
  const withOffers = (...offers: unknown[]) => ({ cancelFlow: { enabled: true, offers } });
  const pause = { type: 'pause', months: 1 };
  verdicts([
    [withOffers(pause, { type: 'pause', months: 12 }), ok],
    [withOffers({ type: 'discount', percentOff: 1, durationMonths: 1 }), ok],
    [withOffers({ type: 'discount', percentOff: 100, durationMonths: 36 }), ok],
    [withOffers({ type: 'downgrade', planId: 'basic', label: 'Basic', amount: 0 }), ok],
    [withOffers(pause, pause, pause, pause, pause), ok],
    [withOffers(pause, pause, pause, pause, pause, pause), 'cancelFlow.offers'],
    [withOffers({ type: 'pause', months: 0 }), 'cancelFlow.offers.0.months'],
    [withOffers({ type: 'pause', months: 13 }), 'cancelFlow.offers.0.months'],
    [withOffers({ type: 'discount', percentOff: 0, durationMonths: 1 }), 'cancelFlow.offers.0.percentOff'],
    [withOffers({ type: 'discount', percentOff: 101, durationMonths: 1 }), 'cancelFlow.offers.0.percentOff'],
    [withOffers({ type: 'discount', percentOff: 50 }), 'cancelFlow.offers.0.durationMonths'],
    [
      withOffers({ type: 'discount', percentOff: 50, durationMonths: 37 }),
      'cancelFlow.offers.0.durationMonths',
    ],
    [withOffers({ type: 'downgrade', planId: '', label: 'Basic', amount: 0 }), 'cancelFlow.offers.0.planId'],
    [withOffers({ type: 'downgrade', planId: 'basic', label: '', amount: 0 }), 'cancelFlow.offers.0.label'],
    [
      withOffers({ type: 'downgrade', planId: 'basic', label: 'Basic', amount: -1 }),
      'cancelFlow.offers.0.amount',
    ],
    [
      withOffers({ type: 'downgrade', planId: 'basic', label: 'Basic', amount: 9.99 }),
      'cancelFlow.offers.0.amount',
    ],
    [withOffers({ type: 'refund', months: 1 }), 'cancelFlow.offers.0.type'],
  ]);
});

describe('proofMode: a control group of 0–50 %', () => {
  verdicts([
    [{ proofMode: { enabled: true, controlPercent: 0 } }, ok],
    [{ proofMode: { enabled: true, controlPercent: 50 } }, ok],
    [{ proofMode: { enabled: true, controlPercent: 51 } }, 'proofMode.controlPercent'],
    [{ proofMode: { enabled: true, controlPercent: -1 } }, 'proofMode.controlPercent'],
  ]);
});

describe('customDomain: a bare hostname, or none', () => {
  verdicts([
    [{ customDomain: 'pay.example.com' }, ok],
    [{ customDomain: null }, ok],
    [{ customDomain: 'https://pay.example.com' }, 'customDomain'],
    [{ customDomain: 'pay.example.com/card' }, 'customDomain'],
    [{ customDomain: 'localhost' }, 'customDomain'],
    [{ customDomain: '127.0.0.1' }, 'customDomain'],
  ]);
});

describe('branding: a name of 1–80 characters and a #rrggbb colour', () => {
  verdicts([
    [{ branding: { brandName: 'A'.repeat(80), primaryColor: '#1A73E8' } }, ok],
    [{ branding: { brandName: '' } }, 'branding.brandName'],
    [{ branding: { brandName: 'A'.repeat(81) } }, 'branding.brandName'],
    [{ branding: { primaryColor: '#fff' } }, 'branding.primaryColor'],
    [{ branding: { primaryColor: 'red' } }, 'branding.primaryColor'],
    [{ branding: { primaryColor: '1a73e8' } }, 'branding.primaryColor'],
  ]);
});

describe('rateLimitPerMinute: never below the 60 of the spec', () => {
  verdicts([
    [{ rateLimitPerMinute: 60 }, ok],
    [{ rateLimitPerMinute: 100_000 }, ok],
    [{ rateLimitPerMinute: 59 }, 'rateLimitPerMinute'],
    [{ rateLimitPerMinute: 100_001 }, 'rateLimitPerMinute'],
    [{ rateLimitPerMinute: 60.5 }, 'rateLimitPerMinute'],
  ]);
});

describe('unknown fields are refused at every level', () => {
  verdicts([
    [{ webhookURL: webhookUrl }, 'webhookURL'],
    [{ retryPolicy: { maxAttemps: 3 } }, 'retryPolicy.maxAttemps'],
    [{ proofMode: { control: 5 } }, 'proofMode.control'],
    [{ cardHealthSweep: { days: 7 } }, 'cardHealthSweep.days'],
    [{ cancelFlow: { offers: [{ type: 'pause', months: 1, note: 'x' }] } }, 'cancelFlow.offers.0.note'],
    [{ branding: { font: 'Inter' } }, 'branding.font'],
  ]);
});
