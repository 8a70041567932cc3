import type { z } from 'zod';
import { badRequest } from './http-error.js';

/**
 * Maps zod issues to the spec's `details`: field name → messages. Unknown fields are named. A field the
 * input lacks is "Required"; one of the wrong type keeps zod's message, which says what was expected.
 * Telling the two apart needs the value the issue saw, which zod keeps only when parsing with
 * `reportInput` (as `validate` does); without it, missing and wrong fields alike keep zod's message.
 */
export function formatIssues(error: z.ZodError): Record<string, string[]> {
  // No prototype: a field named `constructor` or `__proto__` must not resolve to Object's own members.
  const details = Object.create(null) as Record<string, string[]>;
  const add = (field: string, message: string) => (details[field] ??= []).push(message);
  for (const issue of error.issues) {
    const field = issue.path.join('.') || '_';
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add(issue.path.concat(key).join('.'), 'Unknown field');
    } else if (issue.code === 'invalid_type' && 'input' in issue && issue.input === undefined) {
      add(field, 'Required');
    } else {
      add(field, issue.message);
    }
  }
  return details;
}

/**
 * Parses `input` with `schema` or throws a 400 naming each bad field. A string holding U+0000 is refused
 * wherever it is (a value or a key): BSON cannot carry it in a field name, and FerretDB refuses it as a value.
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  // The input on each issue tells a missing field from a wrong one; it is read here and never sent.
  const parsed = schema.safeParse(input, { reportInput: true });
  const withNul = fieldsWithNul(input);
  if (parsed.success && withNul.length === 0) return parsed.data;
  const details = parsed.success
    ? (Object.create(null) as Record<string, string[]>)
    : formatIssues(parsed.error);
  for (const field of withNul) (details[field] ??= []).push('Must not contain U+0000');
  throw badRequest(details);
}

/** A field's place in the input, kept as a link to its parent: paths are spelt only for what is reported. */
interface Place {
  key: string;
  parent: Place | null;
}

const spell = (place: Place | null): string => {
  const keys: string[] = [];
  for (let p = place; p; p = p.parent) keys.push(p.key);
  return keys.reverse().join('.') || '_';
};

/** The fields of `input` (dotted paths as `formatIssues` names them) whose string or key holds U+0000. */
function fieldsWithNul(input: unknown): string[] {
  const found: string[] = [];
  // Walked with a stack of its own: a record of unknown values may nest as deep as its body allows.
  const pending: { place: Place | null; value: unknown }[] = [{ place: null, value: input }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { place, value } = next;
    if (typeof value === 'string') {
      if (value.includes('\0')) found.push(spell(place));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key.includes('\0')) found.push(spell({ key, parent: place }));
        else pending.push({ place: { key, parent: place }, value: inner });
      }
    }
  }
  return found;
}
