/**
 * A fault in how a process is set up that only its operator can fix (a bad variable, a Temporal namespace
 * that does not fit): reported as one line, without a stack trace.
 */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}
