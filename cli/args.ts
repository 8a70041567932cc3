import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { formatIssues } from '../api/validate.js';
import { UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util parseArgs in strict mode, with its errors turned into usage errors (exit code 2). An option
 * that is not `multiple` may be given once: parseArgs would keep the last of two silently, so
 * `--limit 10 … --limit 1000` (a line edited in the shell) would do what neither meant.
 */
export function parseCommand<O extends Options>(argv: string[], options: O) {
  const parse = () => parseArgs({ args: argv, options, allowPositionals: true, strict: true, tokens: true });
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once; give it once`);
    seen.add(token.name);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/** Exactly the positional arguments `names` lists, by name, or a usage error naming a missing or extra one. */
export function positionalArgs<N extends string>(
  positionals: string[],
  names: readonly N[],
  usage: string,
): Record<N, string> {
  const missing = names.find((_, i) => !positionals[i]);
  if (missing !== undefined) throw new UsageError(`missing <${missing}>; usage: ${usage}`);
  const extra = positionals[names.length];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"; usage: ${usage}`);
  return Object.fromEntries(names.map((name, i) => [name, positionals[i]])) as Record<N, string>;
}

/** The single positional argument a command takes (a client id), or a usage error naming it. */
export function onePositional<N extends string>(positionals: string[], name: N, usage: string): string {
  return positionalArgs(positionals, [name], usage)[name];
}

/** No positional argument, or a usage error naming the first one. */
export function noPositionals(positionals: string[], usage: string): void {
  positionalArgs(positionals, [], usage);
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

/**
 * An integer flag within [min, max] (never negative), or a usage error naming the flag and the range. Digits
 * only: Number() would also take `0x10`, `1e1` and ` 7 `, which no one types as a count and which hide typos.
 */
export function integerFlag(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
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

/** A field of the API's input as the operator gave it: `flags` maps a field to its flag (`--token #2`). */
function flagOf(field: string, flags: Readonly<Record<string, string>>): string {
  // A field, or one item of a list a repeated flag gave (`paymentMethodTokens.1`).
  const [, name = '', index] = /^([^.]+)(?:\.(\d+))?$/.exec(field) ?? [];
  const flag = Object.hasOwn(flags, name) ? flags[name] : undefined;
  if (flag === undefined) return field;
  return index === undefined ? flag : `${flag} #${Number(index) + 1}`;
}

/**
 * Input checked with the API's own schema, or a usage error naming each bad field (`what`: the input) by
 * the flag that gave it (`flags`: field → flag; an API field name would mean nothing to the operator). A
 * single value (`what` is then its flag) has no field to name.
 */
export function validInput<S extends z.ZodType>(
  what: string,
  schema: S,
  input: unknown,
  flags: Readonly<Record<string, string>> = {},
): z.infer<S> {
  // With the input on each issue, formatIssues tells a missing field from a wrong one.
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  const problems = Object.entries(formatIssues(parsed.error)).map(([field, messages]) =>
    field === '_' ? messages.join(', ') : `${flagOf(field, flags)}: ${messages.join(', ')}`,
  );
  throw new UsageError(`invalid ${what}: ${problems.join('; ')}`);
}
