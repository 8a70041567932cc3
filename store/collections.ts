/** The collection names: only `store/` knows them. */
export const collections = {
  accounts: 'accounts',
  apiKeys: 'apiKeys',
  recoveries: 'recoveries',
  velocity: 'velocity',
  rateLimits: 'rateLimits',
  events: 'events',
  cardBudgets: 'cardBudgets',
  learning: 'learning',
  links: 'links',
  pulses: 'pulses',
  predictions: 'predictions',
  holdouts: 'holdouts',
} as const;
