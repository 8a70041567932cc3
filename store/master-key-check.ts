import { createHmac, type BinaryLike } from 'node:crypto';
import type { Db } from 'mongodb';
import { ConfigurationError } from '../runtime/configuration-error.js';
import { safeEqual, unseal, type Sealed } from '../runtime/crypto.js';
import { collections } from './collections.js';
import { isDuplicateKey } from './mongo.js';

/** The one record of which master key this database's secrets are sealed with: `_id` is always `checkId`. */
interface KeyCheckDoc {
  _id: string;
  /** HMAC-SHA256 of a fixed text under the key: tells whether a process holds the same key, and nothing of it. */
  check: string;
  at: Date;
}

const checkId = 'master-key';

const fingerprint = (masterKey: BinaryLike) =>
  createHmac('sha256', masterKey).update('recoup master key check v1').digest('hex');

const mismatch = () =>
  new ConfigurationError(
    "The master key is not the one this database's secrets are sealed with: set RECOUP_MASTER_KEY (or DATA_DIR, whose master.key holds it) to the key of the service that uses this MONGODB_URI.",
  );

/** Whether an account sealed before the check was recorded (a database from an earlier release) opens. */
async function opensExistingSecrets(db: Db, masterKey: Buffer): Promise<boolean> {
  const account = await db
    .collection<{ signingSecret?: Sealed }>(collections.accounts)
    .findOne({ signingSecret: { $exists: true } }, { projection: { signingSecret: 1 } });
  if (!account?.signingSecret) return true;
  try {
    unseal(masterKey, account.signingSecret);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses to run with a master key other than the one this database's secrets are sealed with: an API,
 * worker or CLI started with the wrong key (a forgotten RECOUP_MASTER_KEY, another checkout's master.key)
 * would otherwise seal new accounts' secrets under a key the service cannot open, or fail every webhook
 * and charge of the existing ones. The first process to start on a database records the key's
 * fingerprint (after checking that any secrets already there open with it); every later one compares.
 */
export async function checkMasterKey(db: Db, masterKey: Buffer): Promise<void> {
  const checks = db.collection<KeyCheckDoc>(collections.masterKeyCheck);
  let recorded = await checks.findOne({ _id: checkId });
  if (!recorded) {
    if (!(await opensExistingSecrets(db, masterKey))) throw mismatch();
    try {
      await checks.insertOne({ _id: checkId, check: fingerprint(masterKey), at: new Date() });
    } catch (error) {
      // Another process recorded its key first: compare with that one.
      if (!isDuplicateKey(error)) throw error;
    }
    recorded = await checks.findOne({ _id: checkId });
  }
  if (!recorded || !safeEqual(recorded.check, fingerprint(masterKey))) throw mismatch();
}
