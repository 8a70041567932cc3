import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `scripts/toolchain.ts` puts what it builds (git-ignored). */
export const toolsDir = join(dirname(fileURLToPath(import.meta.url)), '..', '.tools');
export const toolchainFile = join(toolsDir, 'toolchain.json');

/** Paths of the servers found or built by the toolchain step; null where not needed. */
export interface Toolchain {
  temporal: string | null;
  mongo: { kind: 'ferretdb' | 'mongod'; path: string } | null;
  testServer: string | null;
  chromium: string | null;
}

/** Reads what the toolchain step recorded; fails clearly when it has not run. */
export function readToolchain(): Toolchain {
  if (!existsSync(toolchainFile)) throw new Error('Toolchain not built: run `npm run toolchain` first.');
  return JSON.parse(readFileSync(toolchainFile, 'utf8')) as Toolchain;
}
