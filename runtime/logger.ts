import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logger; secrets are redacted wherever they could appear. Lines go to stdout unless a
 * `destination` is given (tests read what a process would have logged).
 */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'apiKey',
        'publishableKey',
        'webhookSigningSecret',
        '*.credentials',
        'credentials',
        'secret',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
