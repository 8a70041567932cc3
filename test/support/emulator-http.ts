import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';

/** An emulator's request handler; a failure of it answers 500 with the error, so an emulator's bug shows in the test. */
export type EmulatorHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * Serves `handle` on a free loopback port, over HTTPS with the tests' own certificate when `https` (for
 * APIs whose SDKs take only HTTPS base URLs); returns the server and its base URL.
 */
export async function serveEmulator(
  handle: EmulatorHandler,
  opts: { https?: boolean } = {},
): Promise<{ server: Server; url: string }> {
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    Promise.resolve()
      .then(() => handle(req, res))
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      });
  };
  const server = opts.https
    ? createHttpsServer(
        { cert: readFileSync(inject('tlsCertFile')), key: readFileSync(inject('tlsKeyFile')) },
        listener,
      )
    : createHttpServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `${opts.https ? 'https' : 'http'}://127.0.0.1:${port}` };
}

/** The request's body as text. */
export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The request's form-encoded body. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await readText(req));
}

/** The request's JSON body as an object; `{}` when it has none. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readText(req);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** A JSON answer; `headers` add to (or replace) the JSON content type. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Stops an emulator's server, cutting the connections a client keeps alive. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
