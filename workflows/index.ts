// Every workflow the workers run. Deterministic code only: see eslint.config.js.
export { webhookDeliveryWorkflow } from './webhook-delivery.js';
export { recoveryWorkflow } from './recovery.js';
export { cardHealthSweepWorkflow, cardSweepWorkflow } from './card-health-sweep.js';
export { dataRetentionWorkflow } from './data-retention.js';
export { linkUseWorkflow } from './link-use.js';
