import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logger; secrets are redacted wherever they could appear. */
export function createLogger(level: string, name: string): Logger {
  return pino({
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
  });
}
