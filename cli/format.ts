import { isJsonObject } from '../domain/merge-patch.js';

function padRows(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** A table as aligned plain-text lines; the first row is the header. */
export function table(header: string[], rows: string[][]): string[] {
  return padRows([header, ...rows]);
}

/** Label/value pairs with the values aligned in one column. */
export function pairs(entries: Array<[string, string]>, indent = ''): string[] {
  return padRows(entries.map(([k, v]) => [indent + k, v]));
}

/** Nested settings as dotted paths (`proofMode.controlPercent`) with JSON values, in their own order. */
export function flatten(value: Record<string, unknown>, prefix = ''): Array<[string, string]> {
  return Object.entries(value).flatMap(([key, v]): Array<[string, string]> => {
    const path = prefix + key;
    if (isJsonObject(v) && Object.keys(v).length > 0) return flatten(v, `${path}.`);
    return [[path, typeof v === 'string' ? v : JSON.stringify(v)]];
  });
}

/**
 * A command line to copy into a POSIX shell: each word as it is when the shell leaves it so, else in single
 * quotes (a `'` inside written `'\''`), so an email address like `o'brien@…` survives the paste.
 */
export function shellLine(words: string[]): string {
  return words
    .map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`))
    .join(' ');
}
