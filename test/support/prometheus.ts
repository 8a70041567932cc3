/** One sample line of Prometheus' text format: `name{label="value",…} number`. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the sample lines of a Prometheus text exposition (comments skipped). */
export function parsePrometheus(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match?.[1] || match[3] === undefined) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      if (k !== undefined && v !== undefined) labels[k] = v;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sumOf(text: string, name: string, labels: Record<string, string> = {}): number {
  return parsePrometheus(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
