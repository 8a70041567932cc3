import type { Db } from 'mongodb';
import { calibrates, type BandTally, type RiskRecommendation } from '../domain/risk.js';
import { collections } from './collections.js';
import { isDuplicateKey, upsert } from './mongo.js';

export type PredictionOutcome = 'succeeded' | 'failed' | 'blocked';

/** One risk prediction, kept so its outcome can be reported against it. */
export interface PredictionDoc {
  _id: string; // predictionId
  accountId: string;
  /** The model's raw risk band (tenths): the outcome is counted under it, unless a decisive fact made it. */
  band: number;
  riskScore: number;
  recommendation: RiskRecommendation;
  /** Made while the account was in test mode: its outcome calibrates the sandbox's bands. Absent: live. */
  simulated?: boolean;
  createdAt: Date;
}

/** The first outcome reported for a prediction; the unique _id makes a re-report count once. */
export interface OutcomeDoc {
  _id: string; // predictionId
  accountId: string;
  outcome: PredictionOutcome;
  declineCode: string | null;
  at: Date;
}

/** An account's calibration: outcomes of live predictions under `bands`, of sandbox ones under `sandbox`. */
interface CalibrationDoc {
  _id: string; // accountId
  bands?: Record<string, BandTally>;
  sandbox?: Record<string, BandTally>;
}

/** Where a calibration document keeps the bands of a mode. */
const bandsOf = (simulated: boolean) => (simulated ? 'sandbox' : 'bands');

/**
 * Risk predictions and what became of them. An outcome is logged once (insert-only, keyed by the
 * prediction) and only then counted into the account's calibration tallies (outcomes and failures per
 * band) with `$inc`, as the engine's learning store does; the outcome of a prediction a decisive fact made
 * is logged but counted nowhere (`calibrates`). On MongoDB the counts are exact; on FerretDB, whose
 * updates are not atomic, two outcomes of one account counted at the same instant may lose one count, as
 * may a process that dies between the two writes: calibration tolerates that, as the engine's statistics do.
 * Predictions made in test mode calibrate apart from live ones, and each mode reads only its own (as the
 * engine's statistics do): outcomes reported while integrating never move a live account's risk scores.
 */
export function createPredictionStore(db: Db) {
  const predictions = db.collection<PredictionDoc>(collections.predictions);
  const outcomes = db.collection<OutcomeDoc>(collections.predictionOutcomes);
  const calibration = db.collection<CalibrationDoc>(collections.riskCalibration);
  return {
    async create(doc: PredictionDoc): Promise<void> {
      await predictions.insertOne(doc);
    },

    /** An account's prediction, or null (read by _id alone, checked here). */
    async find(accountId: string, predictionId: string): Promise<PredictionDoc | null> {
      const doc = await predictions.findOne({ _id: predictionId });
      return doc?.accountId === accountId ? doc : null;
    },

    /** Records the outcome of `prediction`; returns the outcome that stands (the first one reported). */
    async recordOutcome(
      prediction: PredictionDoc,
      outcome: Omit<OutcomeDoc, '_id' | 'accountId'>,
    ): Promise<OutcomeDoc> {
      const doc: OutcomeDoc = { _id: prediction._id, accountId: prediction.accountId, ...outcome };
      try {
        await outcomes.insertOne(doc);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return (await outcomes.findOne({ _id: prediction._id })) ?? doc;
      }
      if (!calibrates(prediction)) return doc;
      const failed = outcome.outcome === 'succeeded' ? 0 : 1;
      const bands = bandsOf(prediction.simulated === true);
      const inc = { [`${bands}.${prediction.band}.n`]: 1, [`${bands}.${prediction.band}.failed`]: failed };
      await upsert(() =>
        calibration.updateOne({ _id: prediction.accountId }, { $inc: inc }, { upsert: true }),
      );
      return doc;
    },

    /** The account's reported outcomes by risk band: of sandbox predictions when `simulated`, else live. */
    async calibration(accountId: string, simulated: boolean): Promise<Record<string, BandTally>> {
      return (await calibration.findOne({ _id: accountId }))?.[bandsOf(simulated)] ?? {};
    },

    /**
     * Deletes the account's predictions made before `cutoff` and the outcomes reported before it (data
     * retention); returns how many of each. What the outcomes taught stays in the account's calibration,
     * which names no prediction. Predictions go first: an outcome is reported after its prediction, so one
     * before `cutoff` has its prediction deleted too, and a prediction is never left without the outcome
     * that keeps a second report from being counted.
     */
    async purgeBefore(
      accountId: string,
      cutoff: Date,
    ): Promise<{ predictions: number; predictionOutcomes: number }> {
      const made = await predictions.deleteMany({ accountId, createdAt: { $lt: cutoff } });
      const reported = await outcomes.deleteMany({ accountId, at: { $lt: cutoff } });
      return { predictions: made.deletedCount, predictionOutcomes: reported.deletedCount };
    },
  };
}
