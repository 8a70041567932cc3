import { z } from 'zod';
import { declineGroups } from '../../domain/declines.js';
import { Strategy } from './recovery.js';

const rate = z.number().nullable().describe('0–1; null when there is nothing to divide by');

export const Summary = z.object({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  failedPayments: z
    .int()
    .describe('Recoveries whose failure falls in the range, Proof Mode controls included'),
  recovered: z.int(),
  inProgress: z.int(),
  recoveryRate: rate.describe('Recovered over failures Recoup worked on (controls excluded)'),
  revenueByCurrency: z.record(z.string(), z.object({ failed: z.int(), recovered: z.int() })),
  organicSuccesses: z
    .int()
    .describe(
      'Payments logged with POST /api/recovery/pulse in the range, less those that pay a failure: those that name one (paysTransactionId), and those that are a Proof Mode compared payment’s own (a customer paying on their own)',
    ),
  organicSuccessRate: rate.describe('Organic successes over all payments (organic + failed)'),
  successRateWithRecoup: rate.describe('Organic successes plus recoveries over all payments'),
  liftPoints: z
    .number()
    .nullable()
    .describe(
      'successRateWithRecoup − organicSuccessRate, percentage points (two decimals, from the unrounded rates)',
    ),
  proofMode: z
    .object({
      treatment: z.int().describe('Decided payments Recoup worked on'),
      control: z.int().describe('Decided payments of the control group (no attempts)'),
      treatmentRate: rate.describe('0–1, four decimals; null when the group is empty'),
      controlRate: rate.describe('0–1, four decimals; null when the group is empty'),
      upliftPoints: z.number().nullable(),
      confidenceInterval95: z.tuple([z.number(), z.number()]).nullable(),
      pValue: z.number().nullable(),
      insufficientData: z.boolean(),
    })
    .nullable()
    .describe(
      'Present when failures in the range were drawn into a Proof Mode group (treated or control); payments count once decided (30 days)',
    ),
});

const count = z.int().nonnegative();
const days = z.number().describe('days, two decimals');

export const Breakdown = z.object({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  byDeclineCode: z
    .array(
      z.object({
        declineCode: z
          .string()
          .nullable()
          .describe('The decline code given to execute, in canonical form; null when none was given'),
        group: z.enum(declineGroups),
        failedPayments: count,
        recovered: count,
        inProgress: count,
        recoveryRate: rate,
        revenueByCurrency: z.record(z.string(), z.object({ failed: count, recovered: count })),
      }),
    )
    .describe('Failures Recoup worked on, by decline code, most frequent first'),
  byStrategy: z
    .array(
      z.object({
        strategyUsed: Strategy.nullable(),
        recovered: count,
        recoveredByCurrency: z.record(z.string(), count),
      }),
    )
    .describe('Recovered payments by the strategy that recovered them'),
  chargesToRecover: z
    .array(z.object({ attempts: count, recovered: count }))
    .describe('Recovered payments by how many charges it took, the successful one included'),
  daysToRecover: z
    .object({ recovered: count, p50: days, p90: days, mean: days })
    .nullable()
    .describe('From the failure reported to the payment recovered; null without recoveries'),
  byGateway: z
    .array(
      z.object({
        gateway: z.string(),
        attempts: count,
        approved: count,
        declined: count,
        ambiguous: count.describe('Outcome still unknown'),
        notCharged: count.describe('A lost request the gateway never received'),
        approvalRate: rate.describe('approved ÷ (approved + declined)'),
      }),
    )
    .describe("Every attempt of these recoveries by the account's gateway it went to"),
});
