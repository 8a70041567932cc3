import { parseArgs } from 'node:util';
import { z } from 'zod';

const Options = z.object({
  duration: z.coerce.number().int().min(1).max(600).default(30),
  connections: z.coerce.number().int().min(1).max(1000).default(50),
  accounts: z.coerce.number().int().min(1).max(10_000).default(200),
  gatewayLatencyMs: z.coerce.number().int().min(0).max(10_000).default(50),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug']).default('info'),
  json: z.boolean().default(false),
});
export type BenchOptions = z.infer<typeof Options>;

/** `npm run bench:api -- [--duration 30] [--connections 50] [--accounts 200] [--gateway-latency-ms 50] [--json]` */
export function benchOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      accounts: { type: 'string' },
      'gateway-latency-ms': { type: 'string' },
      'log-level': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const parsed = Options.safeParse({
    duration: values.duration,
    connections: values.connections,
    accounts: values.accounts,
    gatewayLatencyMs: values['gateway-latency-ms'],
    logLevel: values['log-level'],
    json: values.json,
  });
  if (!parsed.success)
    throw new Error(
      `bench:api: ${parsed.error.issues.map((i) => `--${String(i.path[0])}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}
