import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';
import { closeServer } from './emulator-http.js';

/** One request as the receiver got it: the raw bytes, before any parsing. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** Whatever the test's clock said when the request arrived (for schedules: the workflow's time). */
  receivedAt: number;
}

/** How to answer one request: a status, optionally after a delay, with optional headers. */
export interface Answer {
  status: number;
  delayMs?: number;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  close: () => Promise<void>;
}

/**
 * A merchant's webhook endpoint on 127.0.0.1: HTTPS with a certificate from the test CA (trusted by the
 * test processes through NODE_EXTRA_CA_CERTS), or plain HTTP to prove that nothing is sent there.
 */
export async function startReceiver(
  opts: {
    protocol?: 'https' | 'http';
    answer?: (req: ReceivedRequest, index: number) => Answer;
    now?: () => Promise<number>;
  } = {},
): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const answer: (req: ReceivedRequest, index: number) => Answer = opts.answer ?? (() => ({ status: 200 }));
  const now = opts.now ?? (() => Promise.resolve(Date.now()));
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void now().then((receivedAt) => {
        const request: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          raw: Buffer.concat(chunks),
          receivedAt,
        };
        const index = received.push(request) - 1;
        const { status, delayMs = 0, headers = {} } = answer(request, index);
        setTimeout(() => res.writeHead(status, headers).end(), delayMs);
      });
    });
  };
  const server: Server =
    opts.protocol === 'http'
      ? createHttpServer(handler)
      : createHttpsServer(
          { cert: readFileSync(inject('tlsCertFile')), key: readFileSync(inject('tlsKeyFile')) },
          handler,
        );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${opts.protocol ?? 'https'}://127.0.0.1:${port}/webhooks`,
    received,
    close: () => closeServer(server),
  };
}
