import { describe, expect, it } from 'vitest';
import { scaCountries } from '../domain/local-time.js';

describe('the Strong Customer Authentication region', () => {
  it.each(['DE', 'FR', 'IS', 'LI', 'NO', 'GB', 'CH'])(
    'takes in issuers of %s (EEA, UK and Switzerland)',
    (country) => {
      expect(scaCountries.has(country)).toBe(true);
    },
  );
});
