/** Reads until `ready` holds of what was read or `timeoutMs` passes; returns the last read either way. */
export async function poll<T>(
  read: () => T | Promise<T>,
  ready: (value: T) => boolean,
  { timeoutMs = 15_000, everyMs = 100 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ready(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
