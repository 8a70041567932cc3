import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { formatIssues } from '../api/validate.js';
import { UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs in strict mode, with its errors turned into usage errors (exit code 2). */
export function parseCommand<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The single positional argument a command takes (a client id), or a usage error naming it. */
export function onePositional(positionals: string[], name: string, usage: string): string {
  const [value, ...extra] = positionals;
  if (!value) throw new UsageError(`missing <${name}>; usage: ${usage}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"; usage: ${usage}`);
  return value;
}

/** The text of the file `@<path>` names, so credentials need not be typed into the command line. */
function fromFile(flag: string, reference: string): string {
  const path = reference.slice(1);
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? ` (${String(error.code)})` : '';
    throw new UsageError(`${flag}: cannot read ${path}${code}`);
  }
}

/**
 * A JSON value from a flag, given as it is or as `@<file>` (`@/dev/stdin` for standard input: kept out of
 * the process list and the shell's history), or a usage error naming the flag. The value is not repeated in the
 * error (nor the parser's message, which quotes it): it may hold credentials, and errors end up in shell and
 * CI logs.
 */
export function parseJsonFlag(flag: string, text: string): unknown {
  const json = text.startsWith('@') ? fromFile(flag, text) : text;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw new UsageError(`${flag} must be valid JSON (not repeated here: it may hold credentials)`);
  }
}

/** An integer flag within [min, max], or a usage error naming the flag and the range. */
export function integerFlag(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}; got "${value}"`);
  return n;
}

/** A flag that must be one of `allowed`, or a usage error listing them (undefined when not given). */
export function choiceFlag<T extends string>(flag: string, value: string, allowed: readonly T[]): T;
export function choiceFlag<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
): T | undefined;
export function choiceFlag<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  const found = allowed.find((a) => a === value);
  if (!found) throw new UsageError(`${flag} must be one of ${allowed.join(', ')}; got "${value}"`);
  return found;
}

/** Input checked with the API's own schema, or a usage error naming each bad field (`what`: the input). */
export function validInput<S extends z.ZodType>(what: string, schema: S, input: unknown): z.infer<S> {
  // With the input on each issue, formatIssues tells a missing field from a wrong one.
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  const problems = Object.entries(formatIssues(parsed.error)).map(
    ([field, messages]) => `${field}: ${messages.join(', ')}`,
  );
  throw new UsageError(`invalid ${what}: ${problems.join('; ')}`);
}
