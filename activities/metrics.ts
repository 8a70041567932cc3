import type { MetricMeter } from '@temporalio/common';
import type { RecoveryState } from '../domain/recovery.js';
import type { ChargeOutcome, LookupOutcome } from './gateways/types.js';

/** What a gateway request came back with: an answer, an unknown outcome, or an error (the activity retries). */
export type GatewayRequestOutcome = (ChargeOutcome | LookupOutcome)['kind'] | 'error';

/** What one webhook POST came to. */
export type WebhookAttemptOutcome = 'acknowledged' | 'failed' | 'not_sent';

/**
 * The worker's own metrics, recorded on Temporal's metric meter so that they are exported with the SDK's
 * (worker/telemetry.ts). Labels are bounded sets: gateway kinds, outcomes, card brands, event types and
 * recovery states, never an account, customer or token.
 */
export interface WorkerMetrics {
  /** One charge or lookup of a lost charge sent to a gateway, and how long its answer took. */
  gatewayRequest(
    kind: string,
    operation: 'charge' | 'lookup',
    outcome: GatewayRequestOutcome,
    seconds: number,
  ): void;
  /** A charge the card-network rules held back (never sent). */
  heldByNetworkRules(brand: string): void;
  /** One webhook POST; for the first acknowledged one, the time since the event was recorded. */
  webhookAttempt(event: string, outcome: WebhookAttemptOutcome, lagSeconds?: number): void;
  /** An event whose delivery used its whole schedule without an acknowledgement (now in the audit log). */
  webhookFailed(event: string): void;
  /** A recovery reached its final `state`. */
  recoveryEnded(state: RecoveryState): void;
}

/** Seconds: gateway answers take tens of milliseconds to tens of seconds; webhook lags up to a day. */
const gatewayBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const lagBuckets = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 86400];

/** Histogram boundaries by metric name, for the Prometheus exporter (worker/telemetry.ts). */
export const workerHistogramBuckets: Record<string, number[]> = {
  recoup_gateway_request_duration_seconds: gatewayBuckets,
  recoup_webhook_delivery_lag_seconds: lagBuckets,
};

export function createWorkerMetrics(meter: MetricMeter): WorkerMetrics {
  const requests = meter.createCounter(
    'recoup_gateway_requests',
    undefined,
    'Charges and lookups sent to gateways, by gateway kind, operation and outcome',
  );
  const requestSeconds = meter.createHistogram(
    'recoup_gateway_request_duration_seconds',
    'float',
    's',
    'How long gateways took to answer a charge or lookup',
  );
  const held = meter.createCounter(
    'recoup_network_rule_holds',
    undefined,
    'Charges the card-network retry rules held back, by card brand',
  );
  const webhookAttempts = meter.createCounter(
    'recoup_webhook_attempts',
    undefined,
    'Webhook POSTs by event type and outcome (acknowledged: 200 within 10 s; not_sent: URL not https, ' +
      'dunning off, or a resend replaced the delivery)',
  );
  const webhookLag = meter.createHistogram(
    'recoup_webhook_delivery_lag_seconds',
    'float',
    's',
    'From an event being recorded to its first acknowledged delivery',
  );
  const webhooksFailed = meter.createCounter(
    'recoup_webhook_events_failed',
    undefined,
    'Events whose whole delivery schedule failed (in the audit log for a manual resend)',
  );
  const ended = meter.createCounter(
    'recoup_recoveries_ended',
    undefined,
    'Recoveries that reached a final state, by state',
  );
  return {
    gatewayRequest(kind, operation, outcome, seconds) {
      requests.add(1, { gateway_kind: kind, operation, outcome });
      requestSeconds.record(seconds, { gateway_kind: kind, operation });
    },
    heldByNetworkRules: (brand) => held.add(1, { brand }),
    webhookAttempt(event, outcome, lagSeconds) {
      webhookAttempts.add(1, { event, outcome });
      if (lagSeconds !== undefined) webhookLag.record(lagSeconds, { event });
    },
    webhookFailed: (event) => webhooksFailed.add(1, { event }),
    recoveryEnded: (state) => ended.add(1, { state }),
  };
}
