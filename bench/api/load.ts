import autocannon from 'autocannon';

/** What one scenario measured. */
export interface ScenarioResult {
  rps: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  errors: number;
  requests: number;
  /** Unexpected answers by HTTP status, to tell what the errors were. */
  unexpected: Record<string, number>;
}

/** One kind of request: how to build it and which status counts as success. */
export interface Scenario {
  name: string;
  url: string;
  expectStatus: number;
  build: (n: number) => {
    method: 'GET' | 'POST';
    path: string;
    headers: Record<string, string>;
    body?: string;
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Drives one scenario with autocannon over `connections` for `duration` seconds; times every response. */
export async function runScenario(
  s: Scenario,
  opts: { connections: number; duration: number },
): Promise<ScenarioResult> {
  let n = 0;
  let errors = 0;
  const unexpected: Record<string, number> = {};
  const times: number[] = [];
  let done: (r: autocannon.Result) => void = () => undefined;
  let failed: (e: unknown) => void = () => undefined;
  const finished = new Promise<autocannon.Result>((resolve, reject) => ((done = resolve), (failed = reject)));
  const instance = autocannon(
    {
      url: s.url,
      connections: opts.connections,
      duration: opts.duration,
      timeout: 30,
      requests: [
        {
          setupRequest: (req) => ({ ...req, ...s.build((n += 1)) }),
          onResponse: (status) => {
            if (status !== s.expectStatus) {
              errors += 1;
              unexpected[status] = (unexpected[status] ?? 0) + 1;
            }
          },
        },
      ],
    },
    (error, result) => (error ? failed(error) : done(result)),
  );
  instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
  const result = await finished;
  times.sort((a, b) => a - b);
  return {
    rps: Math.round((times.length / opts.duration) * 10) / 10,
    p50Ms: Math.round(percentile(times, 50)),
    p95Ms: Math.round(percentile(times, 95)),
    p99Ms: Math.round(percentile(times, 99)),
    errors: errors + result.errors + result.timeouts,
    requests: times.length,
    unexpected,
  };
}
