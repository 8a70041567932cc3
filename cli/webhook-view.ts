import type { DeliveryAttempt, EventRecord } from '../store/events.js';
import { pairs, table } from './format.js';

/** An event as `--json` prints it: the payload exactly as sent, and every delivery with its attempts. */
export function eventJson(record: EventRecord) {
  return {
    eventId: record._id,
    clientId: record.accountId,
    type: record.type,
    status: record.deliveryStatus,
    createdAt: record.createdAt.toISOString(),
    payload: record.payload,
    deliveries: record.deliveries.map((d) => ({
      deliveryId: d.deliveryId,
      startedAt: d.startedAt.toISOString(),
      attempts: d.attempts.map((a) => ({ ...a, at: a.at.toISOString() })),
    })),
  };
}

function allAttempts(record: EventRecord): DeliveryAttempt[] {
  return record.deliveries.flatMap((d) => d.attempts);
}

/** The outcome of one attempt in a few words: the status code, or what went wrong. */
function outcome(a: DeliveryAttempt): string {
  if (a.statusCode === 200) return '200 acknowledged';
  return a.error ?? String(a.statusCode);
}

/** The audit log as a table, one event a line. */
export function eventTable(records: EventRecord[]): string[] {
  return table(
    ['EVENT ID', 'CREATED', 'CLIENT ID', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST RESULT'],
    records.map((r) => {
      const attempts = allAttempts(r);
      const last = attempts.at(-1);
      return [
        r._id,
        r.createdAt.toISOString(),
        r.accountId,
        r.type,
        r.deliveryStatus,
        String(attempts.length),
        last ? outcome(last) : '-',
      ];
    }),
  );
}

/** One event for people: identity, the payload as sent, then every delivery and attempt. */
export function eventLines(record: EventRecord): string[] {
  const lines = pairs([
    ['eventId', record._id],
    ['clientId', record.accountId],
    ['type', record.type],
    ['status', record.deliveryStatus],
    ['createdAt', record.createdAt.toISOString()],
  ]);
  lines.push(
    'payload:',
    ...JSON.stringify(record.payload, null, 2)
      .split('\n')
      .map((l) => `  ${l}`),
  );
  if (record.deliveries.length === 0) lines.push('deliveries: none (nothing was sent)');
  for (const d of record.deliveries) {
    lines.push(`delivery ${d.deliveryId} (started ${d.startedAt.toISOString()}):`);
    if (d.attempts.length === 0) {
      lines.push('  no attempt yet');
      continue;
    }
    const rows = d.attempts.map((a) => [
      String(a.attempt),
      a.at.toISOString(),
      a.statusCode === null ? '-' : String(a.statusCode),
      `${a.latencyMs} ms`,
      outcome(a),
    ]);
    lines.push(...table(['#', 'AT', 'STATUS', 'LATENCY', 'RESULT'], rows).map((l) => `  ${l}`));
  }
  return lines;
}
