import { patched } from '@temporalio/workflow';
import { classifyDecline, type DeclineInfo } from '../domain/declines.js';

/** Workflow version: decline codes known since 2026-11-26 (Stripe's never-retry codes) are classified. */
const laterDeclineCodesPatch = 'decline-codes-2026-11-26';

/**
 * `classifyDecline` as this workflow's version knows the codes: a recovery begun before a code was known
 * keeps treating it as it did when its history was written.
 */
export function classifyInWorkflow(code: string | null | undefined): DeclineInfo {
  return classifyDecline(code, () => patched(laterDeclineCodesPatch));
}
