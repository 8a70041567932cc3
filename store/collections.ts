/** The collection names: only `store/` knows them. */
export const collections = {
  accounts: 'accounts',
  apiKeys: 'apiKeys',
  recoveries: 'recoveries',
  idempotencyKeys: 'idempotencyKeys',
  velocity: 'velocity',
  rateLimits: 'rateLimits',
  events: 'events',
  cardBudgets: 'cardBudgets',
  learning: 'learning',
  links: 'links',
  pulses: 'pulses',
  predictions: 'predictions',
  holdouts: 'holdouts',
  attempts: 'attempts',
  sandboxCharges: 'sandboxCharges',
} as const;
