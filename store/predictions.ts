import type { Db } from 'mongodb';
import type { BandTally, RiskRecommendation } from '../domain/risk.js';
import { collections } from './collections.js';
import { logAndCountOnce, type Countable } from './count-once.js';
import { upsert } from './mongo.js';

export type PredictionOutcome = 'succeeded' | 'failed' | 'blocked';

/** One risk prediction, kept so its outcome can be reported against it. */
export interface PredictionDoc {
  _id: string; // predictionId
  accountId: string;
  /** The model's raw risk band (tenths): the outcome is counted under it. */
  band: number;
  riskScore: number;
  recommendation: RiskRecommendation;
  createdAt: Date;
}

/** The first outcome reported for a prediction; the unique _id makes a re-report count once. */
export interface OutcomeDoc extends Countable {
  _id: string; // predictionId
  accountId: string;
  outcome: PredictionOutcome;
  declineCode: string | null;
  at: Date;
}

interface CalibrationDoc {
  _id: string; // accountId
  bands: Record<string, BandTally>;
}

/**
 * Risk predictions and what became of them. An outcome is logged once (insert-only, keyed by the
 * prediction) and counted once into the account's calibration tallies (outcomes and failures per band),
 * as the engine's learning store counts attempts (`logAndCountOnce`).
 */
export function createPredictionStore(db: Db, clock: () => Date = () => new Date()) {
  const predictions = db.collection<PredictionDoc>(collections.predictions);
  const calibration = db.collection<CalibrationDoc>(collections.riskCalibration);
  /** One outcome, as first reported, in its prediction's band. */
  async function count(prediction: PredictionDoc, first: OutcomeDoc): Promise<void> {
    const failed = first.outcome === 'succeeded' ? 0 : 1;
    const inc = { [`bands.${prediction.band}.n`]: 1, [`bands.${prediction.band}.failed`]: failed };
    await upsert(() => calibration.updateOne({ _id: prediction.accountId }, { $inc: inc }, { upsert: true }));
  }
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
      return logAndCountOnce(
        db,
        collections.predictionOutcomes,
        doc,
        (first) => count(prediction, first),
        clock(),
      );
    },

    /** The account's reported outcomes by risk band. */
    async calibration(accountId: string): Promise<Record<string, BandTally>> {
      return (await calibration.findOne({ _id: accountId }))?.bands ?? {};
    },
  };
}
