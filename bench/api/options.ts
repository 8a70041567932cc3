import { parseArgs } from 'node:util';
import { z } from 'zod';

const Options = z
  .object({
    duration: z.coerce.number().int().min(1).max(600).default(30),
    connections: z.coerce.number().int().min(1).max(1000).default(50),
    accounts: z.coerce.number().int().min(1).max(10_000).default(200),
    gatewayLatencyMs: z.coerce.number().int().min(0).max(10_000).default(50),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug']).default('info'),
    json: z.boolean().default(false),
    /** A running API to measure instead of starting the embedded stack. */
    apiUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** A certificate (and its key) for 127.0.0.1 that the deployment's workers trust, for the receiver. */
    receiverCert: z.string().min(1).optional(),
    receiverKey: z.string().min(1).optional(),
  })
  .refine((o) => (o.receiverCert === undefined) === (o.receiverKey === undefined), {
    path: ['receiver-key'],
    message: '--receiver-cert and --receiver-key go together',
  });
export type BenchOptions = z.infer<typeof Options>;

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * `npm run bench:api -- [--duration 30] [--connections 50] [--accounts 200] [--gateway-latency-ms 50] [--json]
 * [--api-url URL] [--receiver-cert FILE --receiver-key FILE]`
 */
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
      'api-url': { type: 'string' },
      'receiver-cert': { type: 'string' },
      'receiver-key': { type: 'string' },
    },
  });
  const parsed = Options.safeParse({
    duration: values.duration,
    connections: values.connections,
    accounts: values.accounts,
    gatewayLatencyMs: values['gateway-latency-ms'],
    logLevel: values['log-level'],
    json: values.json,
    apiUrl: values['api-url'],
    receiverCert: values['receiver-cert'],
    receiverKey: values['receiver-key'],
  });
  if (!parsed.success)
    throw new Error(
      `bench:api: ${parsed.error.issues.map((i) => `--${kebab(String(i.path[0]))}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}
