import { randomUUID } from 'node:crypto';
import type { ConnectorSource } from '../domain/connectors.js';
import { recoveryWorkflowId, statusOf } from '../domain/recovery.js';
import type { RecoveryRequest } from '../domain/recovery-request.js';
import { cardKeyOf } from '../runtime/crypto.js';
import type { Account } from '../store/accounts.js';
import type { Stores } from '../store/index.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { conflict, type HttpError } from './http-error.js';

/** A request let in (a new recovery, or one whose start failed and is resumed), or refused as a duplicate. */
export type Admission =
  | { kind: 'admitted'; doc: RecoveryDoc }
  | { kind: 'duplicate'; by: 'idempotencyKey' | 'velocity'; existing: RecoveryDoc | null; error: HttpError };

/** 409: the existing recovery, so the merchant can find its outcome instead of charging twice. */
function duplicate(transactionId: string, existing: RecoveryDoc | null, why: string) {
  return conflict({
    error: 'Duplicate request',
    message: why,
    existingTransactionId: existing?.publicId ?? transactionId,
    existingStatus: existing ? statusOf(existing.state) : 'unknown',
    existingRecovered: existing?.state === 'succeeded',
  });
}

/**
 * The intake checks every recovery passes, whether the merchant called execute or a billing platform
 * reported the failure: the idempotency key, then the 5-minute velocity rule (same card and amount), then
 * the read model. Claims are unique inserts, so concurrent copies of one request admit exactly one.
 */
export async function admitRecovery(
  stores: Stores,
  account: Account,
  req: RecoveryRequest,
  now: Date,
  connector?: ConnectorSource,
): Promise<Admission> {
  const { recoveries, claims } = stores;
  const transactionId = randomUUID();
  if (req.idempotencyKey) {
    const held = await claims.claimKey(account.id, req.idempotencyKey, transactionId, now);
    if (held) {
      const existing = await recoveries.find(account.id, held);
      if (existing?.startFailed) return { kind: 'admitted', doc: existing };
      return {
        kind: 'duplicate',
        by: 'idempotencyKey',
        existing,
        error: duplicate(held, existing, 'This idempotencyKey was already used.'),
      };
    }
  }
  const cardKey = cardKeyOf(account.id, req.paymentMethodToken);
  const recent = await claims.claimVelocity(
    account.id,
    cardKey,
    req.amount,
    req.currency,
    transactionId,
    now,
  );
  if (recent) {
    if (req.idempotencyKey) await claims.releaseKey(account.id, req.idempotencyKey);
    const existing = await recoveries.find(account.id, recent);
    return {
      kind: 'duplicate',
      by: 'velocity',
      existing,
      error: duplicate(
        recent,
        existing,
        'The same card and amount were submitted within the last 5 minutes.',
      ),
    };
  }
  const doc = await recoveries.create({
    transactionId,
    accountId: account.id,
    workflowId: recoveryWorkflowId(account.id, req.idempotencyKey ?? transactionId),
    cardKey,
    request: req,
    isSimulated: account.testMode,
    ...(connector ? { connector } : {}),
    now,
  });
  return { kind: 'admitted', doc };
}
