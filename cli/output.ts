import type { CliContext } from './context.js';

/** The `--json` flag of every command that prints for people (`customers export` prints JSON only, and takes none). */
export const jsonFlag = { json: { type: 'boolean', default: false } } as const;

/** Prints a result as JSON (`--json`) or as lines for people. */
export function print(ctx: CliContext, asJson: boolean, value: unknown, lines: () => string[]): void {
  if (asJson) ctx.out(JSON.stringify(value, null, 2));
  else for (const line of lines()) ctx.out(line);
}
