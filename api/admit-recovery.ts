import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ConnectorSource } from '../domain/connectors.js';
import { recoveryWorkflowId, statusOf } from '../domain/recovery.js';
import type { RecoveryRequest } from '../domain/recovery-request.js';
import { minRetentionDays } from '../domain/settings.js';
import { cardKeyOf } from '../runtime/crypto.js';
import type { Account } from '../store/accounts.js';
import type { Stores } from '../store/index.js';
import type { KeyClaim } from '../store/intake-claims.js';
import type { RecoveryDoc } from '../store/recoveries.js';
import { conflict, type HttpError } from './http-error.js';

/**
 * How long an intake may take from claiming a key to storing its recovery, and from storing it to starting
 * its workflow (a few store writes, then one call to Temporal): a claim older than this with no recovery
 * behind it, or a recovery older than this still processing with no attempt, was left by an intake that
 * died midway (or whose store failed), and a retry carries on in its place.
 */
export const abandonedAfterMs = 60_000;

const dayMs = 86_400_000;

/**
 * A request let in (a new recovery, or one whose start failed or never happened, resumed), or refused as a
 * duplicate.
 */
export type Admission =
  | { kind: 'admitted'; doc: RecoveryDoc }
  | { kind: 'duplicate'; by: 'idempotencyKey' | 'velocity'; existing: RecoveryDoc | null; error: HttpError };

/** 409: the existing recovery, so the merchant can find its outcome instead of charging twice. */
export function duplicate(transactionId: string, existing: RecoveryDoc | null, why: string) {
  return conflict({
    error: 'Duplicate request',
    message: why,
    existingTransactionId: existing?.publicId ?? transactionId,
    existingStatus: existing ? statusOf(existing.state) : 'unknown',
    existingRecovered: existing?.state === 'succeeded',
  });
}

/** Still processing, no attempt, nothing written since it was stored: a started workflow records its screen at once. */
const untouchedSinceStored = (doc: RecoveryDoc) =>
  !doc.startFailed &&
  doc.state === 'processing' &&
  doc.attempts.length === 0 &&
  doc.updatedAt.getTime() === doc.createdAt.getTime();

/**
 * A recovery whose intake may have died between storing it and starting its workflow (or whose customer
 * index entry failed after the insert): still processing, no attempt, long after it was stored. Its
 * workflow may yet exist (workers far behind): `launchRecovery` starts it only if Temporal has none.
 */
export function mayBeUnstarted(doc: RecoveryDoc, now: Date): boolean {
  return untouchedSinceStored(doc) && now.getTime() - doc.createdAt.getTime() >= abandonedAfterMs;
}

/**
 * A recovery that may be unstarted but is too young for a retry to take over (its intake may be starting
 * it right now): untouched since it was stored under `abandonedAfterMs` ago.
 */
export function mayStillBeStarting(doc: RecoveryDoc, now: Date): boolean {
  return untouchedSinceStored(doc) && now.getTime() - doc.createdAt.getTime() < abandonedAfterMs;
}

/**
 * A duplicate's recovery that is resumed, not refused: its start failed, or may never have happened, and the
 * request is the one it was made for (a merchant's request changed since, e.g. another card or amount, is a
 * duplicate: resuming would charge what the first one asked for). A billing platform's redelivery is read
 * from the invoice as it stands now (amount due, latest decline), so the invoice, its key, decides: `connector`.
 */
const resumable = (doc: RecoveryDoc, req: RecoveryRequest, now: Date, connector: boolean) =>
  doc.state === 'processing' &&
  (doc.startFailed || mayBeUnstarted(doc, now)) &&
  (connector || isDeepStrictEqual(doc.request, req));

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The recovery whose workflow id a key would take: one made without a key has its transactionId in its
 * workflow id where a key would be, so a key equal to it (a merchant keying a retry by the old recovery's
 * id) must not start a second recovery that attaches to the first one's workflow.
 */
async function recoveryKeyedLike(stores: Stores, accountId: string, key: string) {
  if (!uuidShape.test(key)) return null;
  const other = await stores.recoveries.find(accountId, key);
  return other?.workflowId === recoveryWorkflowId(accountId, key) ? other : null;
}

/**
 * A key claim with no recovery behind it that a retry takes over: older than `abandonedAfterMs`, and younger
 * than the shortest data retention (an older one may be a purged recovery's key, never to be used again).
 */
function abandoned(claim: KeyClaim, now: Date): boolean {
  const age = now.getTime() - claim.createdAt.getTime();
  return age >= abandonedAfterMs && age < minRetentionDays * dayMs;
}

/**
 * The intake checks every recovery passes, whether the merchant called execute or a billing platform
 * reported the failure: the idempotency key, then the 5-minute velocity rule (same card and amount), then
 * the read model. Claims are unique inserts, so concurrent copies of one request admit exactly one; an
 * abandoned key claim is taken over under its own transaction id, whose recovery only one retry can insert.
 */
export async function admitRecovery(
  stores: Stores,
  account: Account,
  req: RecoveryRequest,
  now: Date,
  connector?: ConnectorSource,
): Promise<Admission> {
  const { recoveries, claims } = stores;
  let transactionId: string = randomUUID();
  let claimedKey = false;
  if (req.idempotencyKey) {
    const keyedLike = await recoveryKeyedLike(stores, account.id, req.idempotencyKey);
    if (keyedLike)
      return keyUsed(
        keyedLike.publicId,
        keyedLike,
        'This idempotencyKey is the transactionId of another recovery.',
      );
    const held = await claims.claimKey(account.id, req.idempotencyKey, transactionId, now);
    if (held) {
      const existing = await recoveries.find(account.id, held.transactionId);
      if (existing && resumable(existing, req, now, connector !== undefined))
        return { kind: 'admitted', doc: existing };
      if (existing || !abandoned(held, now)) return keyUsed(held.transactionId, existing);
      transactionId = held.transactionId;
    } else claimedKey = true;
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
  // A taken-over claim finds its own velocity claim when its intake died after making it.
  if (recent && recent !== transactionId) {
    // Only a key this request claimed is given back: a taken-over one may be another retry's by now.
    if (claimedKey && req.idempotencyKey) await claims.releaseKey(account.id, req.idempotencyKey);
    const existing = await recoveries.find(account.id, recent);
    // Only a request without a key is the same request as a keyless one found by the velocity rule; any
    // other is a duplicate of it (decisions.md: 409).
    const sameRequest = !req.idempotencyKey && !existing?.idempotencyKey;
    if (existing && sameRequest && resumable(existing, req, now, connector !== undefined))
      return { kind: 'admitted', doc: existing };
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
  if (doc) return { kind: 'admitted', doc };
  // Another retry took the abandoned claim over first.
  return keyUsed(transactionId, await recoveries.find(account.id, transactionId));
}

/** The idempotency key is held by `transactionId`'s recovery (or by an intake on its way to storing it). */
function keyUsed(
  transactionId: string,
  existing: RecoveryDoc | null,
  why = 'This idempotencyKey was already used.',
): Admission {
  return {
    kind: 'duplicate',
    by: 'idempotencyKey',
    existing,
    error: duplicate(transactionId, existing, why),
  };
}
