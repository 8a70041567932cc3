import { heartbeat } from '@temporalio/activity';
import {
  purgeAccountData,
  purgeOperationalRecords,
  type OperationalCounts,
  type PurgeCounts,
} from '../services/data-retention.js';
import type { ActivityDeps } from './deps.js';

/** What one day's purge did over the deployment. */
export interface RetentionResult extends PurgeCounts, OperationalCounts {
  accounts: number;
}

export function retentionActivities({ stores, log }: ActivityDeps) {
  return {
    /**
     * Deletes, for every account with a `dataRetentionDays`, its records older than that as of `asOf`
     * (epoch ms, the workflow's clock), heartbeating after each account, then the records that only serve
     * running recoveries, past their fixed age in every account. A retry starts over: deleting what is
     * already gone changes nothing.
     */
    async purgeExpiredData(input: { asOf: number }): Promise<RetentionResult> {
      const total: RetentionResult = {
        accounts: 0,
        recoveries: 0,
        events: 0,
        pulses: 0,
        links: 0,
        platformEvents: 0,
        adyenAuthorisations: 0,
        attemptSends: 0,
      };
      for (const account of await stores.accounts.withRetention()) {
        const counts = await purgeAccountData(stores, account, new Date(input.asOf));
        total.accounts += 1;
        for (const [kind, n] of Object.entries(counts) as Array<[keyof PurgeCounts, number]>)
          total[kind] += n;
        heartbeat(account.id);
      }
      Object.assign(total, await purgeOperationalRecords(stores, new Date(input.asOf)));
      log.info(total, 'data retention purge');
      return total;
    },
  };
}
