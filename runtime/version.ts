import { readFileSync } from 'node:fs';

/** The package version, reported by the health check and the OpenAPI document. */
export const version: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
