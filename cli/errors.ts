/** A mistake in how the CLI was called or in the values given to it: exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Something the caller asked about does not exist (an unknown client id): exit code 1. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/** The process exit code for an error thrown by a command. */
export function exitCodeFor(error: unknown): 1 | 2 {
  return error instanceof UsageError ? 2 : 1;
}
