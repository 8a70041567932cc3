import { resubmissionWindowMs } from '../../domain/links.js';
import { sha256 } from '../../runtime/crypto.js';
import type { ConsumptionDoc } from '../../store/links.js';

/**
 * Digest of one hosted submission: the rendered form's token with what it chose, or the gateway session a
 * card was saved in. Stored with the use it makes, so that the same submission sent again is recognised.
 */
export const submissionDigest = (kind: 'cancel-flow' | 'card-form' | 'card-session', ...parts: string[]) =>
  sha256([kind, ...parts].join('|'));

/**
 * The recorded use when this same submission made it, within the resubmission window (a second click
 * while the first was saving, a reload of the result); null for any other use, or an older one.
 */
export function useBySameSubmission(
  consumption: ConsumptionDoc | null,
  digest: string,
  now: Date,
): ConsumptionDoc | null {
  if (!consumption?.formDigest || consumption.formDigest !== digest) return null;
  return now.getTime() - consumption.at.getTime() <= resubmissionWindowMs ? consumption : null;
}
