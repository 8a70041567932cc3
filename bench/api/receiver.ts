import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

/** A local HTTPS webhook receiver that notes when each event arrived, for delivery lag. */
export interface LagReceiver {
  url: string;
  /** Milliseconds from each event's `createdAt` (outcome recorded) to its arrival here. */
  lags: number[];
  close: () => Promise<void>;
}

export async function startLagReceiver(tls: { certFile: string; keyFile: string }): Promise<LagReceiver> {
  const lags: number[] = [];
  const server: Server = createServer(
    { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
    (req, res) => {
      const arrived = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { createdAt } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt?: string };
        if (createdAt && req.headers['x-service-delivery-attempt'] === '1')
          lags.push(arrived - Date.parse(createdAt));
        res.writeHead(200).end();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    lags,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
