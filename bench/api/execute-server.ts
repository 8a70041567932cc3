import Koa from 'koa';
import { RecoveryRequest } from '../../domain/recovery-request.js';

/**
 * The comparison servers' shared shape: a plain Koa handler that validates the execute body with the same
 * schema as the API (400 on a bad one), then answers whatever `execute` returns. Listens on 127.0.0.1 and
 * prints one line once it does, which the benchmark waits for.
 */
export function serveExecute(
  port: number,
  name: string,
  execute: (r: RecoveryRequest) => Promise<{ success: boolean; transactionId: string }>,
): void {
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) chunks.push(chunk);
    const parsed = RecoveryRequest.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    if (!parsed.success) {
      ctx.status = 400;
      ctx.body = { error: 'Validation failed' };
      return;
    }
    ctx.body = await execute(parsed.data);
  });
  app.listen(port, '127.0.0.1', () => process.stdout.write(`${name} listening\n`));
}
