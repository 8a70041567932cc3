import { noopMetricMeter, type MetricMeter } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import { workerHistogramBuckets } from '../activities/metrics.js';

/**
 * With an address, installs Temporal's runtime so that it serves Prometheus metrics at `/metrics` there:
 * the SDK's own (`temporal_*`: task latencies, schedule-to-start, failures, pollers, the sticky cache) and
 * Recoup's, recorded on the meter this returns (activities/metrics.ts). Without one, a meter that drops
 * everything. Call it before any Temporal connection is made: the runtime is per process.
 */
export function installTelemetry(at: { host: string; port: number } | null): MetricMeter {
  if (!at) return noopMetricMeter;
  const host = at.host.includes(':') ? `[${at.host}]` : at.host;
  const runtime = Runtime.install({
    telemetryOptions: {
      metrics: {
        metricPrefix: 'temporal_',
        prometheus: {
          bindAddress: `${host}:${at.port}`,
          countersTotalSuffix: true,
          useSecondsForDurations: true,
          histogramBucketOverrides: workerHistogramBuckets,
        },
      },
    },
  });
  return runtime.metricMeter;
}
