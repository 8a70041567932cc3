/** One line for stderr: an error's message without its stack, a multi-line message folded. */
export function errorLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
}
