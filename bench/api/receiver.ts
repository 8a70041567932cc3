import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

/** A local HTTPS webhook receiver that notes when each event arrived, for delivery lag. */
export interface LagReceiver {
  url: string;
  /** Milliseconds from `createdAt` (outcome recorded) to arrival here, of the events created since `from`. */
  lagsSince: (from: number) => number[];
  close: () => Promise<void>;
}

export async function startLagReceiver(tls: { certFile: string; keyFile: string }): Promise<LagReceiver> {
  const arrivals: Array<{ createdAt: number; lag: number }> = [];
  const server: Server = createServer(
    { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
    (req, res) => {
      const arrived = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { createdAt } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt?: string };
        if (createdAt && req.headers['x-service-delivery-attempt'] === '1')
          arrivals.push({ createdAt: Date.parse(createdAt), lag: arrived - Date.parse(createdAt) });
        res.writeHead(200).end();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    lagsSince: (from) => arrivals.filter((a) => a.createdAt >= from).map((a) => a.lag),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
