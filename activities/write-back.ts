import type { ConnectorPlatform, WriteBackOutcome } from '../domain/connectors.js';
import { connectorFor } from './connectors/registry.js';
import type { WriteBack } from './connectors/types.js';
import type { ActivityDeps } from './deps.js';

export function writeBackActivities(deps: ActivityDeps) {
  return {
    /**
     * Records a recovered payment on the billing platform's invoice, so the platform stops collecting it.
     * Platform errors throw and the activity retries (every connector's write is idempotent); the outcome
     * goes into the read model.
     */
    async writeBackPayment(
      input: WriteBack & { accountId: string; transactionId: string; platform: ConnectorPlatform },
    ): Promise<WriteBackOutcome> {
      const loaded = await deps.stores.accounts.withConnector(input.accountId, input.platform);
      const connector = connectorFor(input.platform);
      const outcome =
        loaded && connector?.writeBack
          ? await connector.writeBack(loaded.config, input, { gateways: loaded.gateways })
          : 'not_configured';
      await deps.stores.recoveries.update(input.transactionId, { writeBack: outcome }, deps.clock());
      deps.log.info({ transactionId: input.transactionId, platform: input.platform, outcome }, 'write-back');
      return outcome;
    },
  };
}
