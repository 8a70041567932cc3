import type {
  MetricCounter,
  MetricGauge,
  MetricHistogram,
  MetricMeter,
  MetricTags,
  NumericMetricValueType,
} from '@temporalio/common';

/** One value recorded on a metric, with its tags. */
export interface Sample {
  name: string;
  value: number;
  tags: MetricTags;
}

/**
 * A MetricMeter that keeps every value it is given, so a test can read what production code recorded on
 * Temporal's meter without installing a runtime (which is one per process).
 */
export class RecordingMeter implements MetricMeter {
  constructor(
    readonly samples: Sample[] = [],
    private readonly tags: MetricTags = {},
  ) {}

  private push(name: string, value: number, own: MetricTags, extra: MetricTags = {}) {
    this.samples.push({ name, value, tags: { ...this.tags, ...own, ...extra } });
  }

  createCounter(name: string, unit?: string, description?: string): MetricCounter {
    const counter = (own: MetricTags): MetricCounter => ({
      name,
      ...(unit ? { unit } : {}),
      ...(description ? { description } : {}),
      kind: 'counter',
      valueType: 'int',
      add: (value, extra) => this.push(name, value, own, extra),
      withTags: (tags) => counter({ ...own, ...tags }),
    });
    return counter({});
  }

  createHistogram(
    name: string,
    valueType: NumericMetricValueType = 'int',
    unit?: string,
    description?: string,
  ): MetricHistogram {
    const histogram = (own: MetricTags): MetricHistogram => ({
      name,
      ...(unit ? { unit } : {}),
      ...(description ? { description } : {}),
      kind: 'histogram',
      valueType,
      record: (value, extra) => this.push(name, value, own, extra),
      withTags: (tags) => histogram({ ...own, ...tags }),
    });
    return histogram({});
  }

  createGauge(
    name: string,
    valueType: NumericMetricValueType = 'int',
    unit?: string,
    description?: string,
  ): MetricGauge {
    const gauge = (own: MetricTags): MetricGauge => ({
      name,
      ...(unit ? { unit } : {}),
      ...(description ? { description } : {}),
      kind: 'gauge',
      valueType,
      set: (value, extra) => this.push(name, value, own, extra),
      withTags: (tags) => gauge({ ...own, ...tags }),
    });
    return gauge({});
  }

  withTags(tags: MetricTags): MetricMeter {
    return new RecordingMeter(this.samples, { ...this.tags, ...tags });
  }

  /** The values recorded on `name` whose tags include `tags`. */
  values(name: string, tags: MetricTags = {}): number[] {
    return this.samples
      .filter((s) => s.name === name && Object.entries(tags).every(([k, v]) => s.tags[k] === v))
      .map((s) => s.value);
  }
}
