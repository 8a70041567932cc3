import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configVariables } from '../runtime/config.js';
import { devStackVariables } from '../scripts/dev-stack-config.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = (title: string) => readme.split(/^## /m).find((s) => s.startsWith(title)) ?? '';

describe('README', () => {
  it('gives exactly two quick-start commands: one that runs Recoup and one that tests it', () => {
    const commands = [...section('Quick start').matchAll(/```sh\n([^`]*?)\n```/g)].map((m) => m[1]);
    expect(commands).toEqual(['npm install && npm start', 'npm install && npm test']);
  });

  it('documents every configuration variable in a table row', () => {
    const configuration = section('Configuration');
    for (const variable of [...configVariables, ...devStackVariables])
      expect(configuration, variable).toMatch(new RegExp(`^\\| \`${variable}\` +\\|`, 'm'));
  });
});
