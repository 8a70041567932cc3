import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** The request's body as text. */
export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
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
