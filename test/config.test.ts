import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configVariables, loadConfig } from '../runtime/config.js';
import { ConfigurationError } from '../runtime/configuration-error.js';
import { devStackVariables, loadDevStackConfig } from '../scripts/dev-stack-config.js';

const key = Buffer.alloc(32, 7).toString('base64');
const config = (env: Record<string, string>) => loadConfig({ RECOUP_MASTER_KEY: key, ...env });

/** The message of the error loading `env` stops with (every bad variable, one a line). */
function refusal(env: Record<string, string>): string {
  try {
    config(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

describe('an invalid value stops the process with a message naming the variable', () => {
  // Never read as unset (the default) nor coerced (an empty PORT read as 0): an empty value is most often a
  // template or an .env line that lost its value, and the operator should hear of it.
  it.each(configVariables)('%s set to an empty or blank value', (name) => {
    for (const value of ['', '  '])
      expect(refusal({ [name]: value })).toBe(
        `Invalid configuration:\n  ${name}: must not be empty (unset it to use its default)`,
      );
  });

  it.each([
    ['PORT', '0'],
    ['PORT', '65536'],
    ['PORT', 'http'],
    ['TEMPORAL_UI_PORT', '0'],
    ['ACCOUNT_CACHE_SECONDS', '301'],
    ['PUBLIC_BASE_URL', 'ftp://pay.example.com'],
    ['PUBLIC_BASE_URL', 'mailto:billing@example.com'],
    ['PUBLIC_BASE_URL', 'pay.example.com'],
  ])('%s=%s', (name, value) => {
    expect(refusal({ [name]: value })).toMatch(new RegExp(`^Invalid configuration:\\n  ${name}: [^\\n]+$`));
  });

  it('names every bad variable at once', () => {
    expect(refusal({ PORT: '', PUBLIC_BASE_URL: 'ftp://x', MONGODB_URI: ' ' }).split('\n')).toEqual([
      'Invalid configuration:',
      '  PORT: must not be empty (unset it to use its default)',
      '  PUBLIC_BASE_URL: must be an http or https URL',
      '  MONGODB_URI: must not be empty (unset it to use its default)',
    ]);
  });
});

describe("`npm start`'s own variables", () => {
  // An empty DATA_DIR read as '' would put the master key, the demo account's API key and the databases in
  // the working directory, the repository's root, where git offers to commit them.
  it.each(devStackVariables)('%s set to an empty or blank value stops it, naming the variable', (name) => {
    for (const value of ['', '  '])
      expect(() => loadDevStackConfig({ [name]: value })).toThrow(
        `Invalid configuration:\n  ${name}: must not be empty (unset it to use its default)`,
      );
  });

  it('unset: the defaults, the data under .data', () => {
    expect(loadDevStackConfig({})).toMatchObject({ apiPort: 3000, dataDir: resolve('.data') });
  });
});

describe('valid values', () => {
  it('unset: the defaults', () => {
    expect(config({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      publicBaseUrl: 'http://localhost:3000',
      temporal: { address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'recoup', uiPort: 8233 },
      mongoUri: 'mongodb://127.0.0.1:27017/recoup',
      accountCacheMs: 5000,
      metrics: null,
    });
  });

  it('ports 1 to 65535, a cache of 0 seconds, http and https base URLs', () => {
    expect(config({ PORT: '1' }).port).toBe(1);
    expect(config({ PORT: '65535', TEMPORAL_UI_PORT: '65535' })).toMatchObject({
      port: 65535,
      temporal: { uiPort: 65535 },
    });
    expect(config({ ACCOUNT_CACHE_SECONDS: '0' }).accountCacheMs).toBe(0);
    expect(config({ PUBLIC_BASE_URL: 'https://pay.example.com/' }).publicBaseUrl).toBe(
      'https://pay.example.com',
    );
    expect(config({ PUBLIC_BASE_URL: 'http://10.0.0.5:8080' }).publicBaseUrl).toBe('http://10.0.0.5:8080');
  });
});
