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

/** Parses `input` with `schema` or throws a 400 naming each bad field. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  // The input on each issue tells a missing field from a wrong one; it is read here and never sent.
  const parsed = schema.safeParse(input, { reportInput: true });
  if (!parsed.success) throw badRequest(formatIssues(parsed.error));
  return parsed.data;
}
