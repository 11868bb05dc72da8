import { createRequire } from 'node:module';

/** One metric family of a scrape, as parse-prometheus-text-format reads it. */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }>;
}

// The package has no types of its own.
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => MetricFamily[];

/**
 * Parses a scrape with a Prometheus text-format parser; a malformed one
 * throws. The parser folds a histogram's labelled series into one, so each
 * histogram's `_bucket`, `_sum` and `_count` series are also read as plain
 * samples, under those names (their `type` says HISTOGRAM still).
 */
export function parseScrape(text: string): Map<string, MetricFamily> {
  const families = new Map(parse(text).map((family) => [family.name, family]));
  const histograms = [...families.values()].filter((family) => family.type === 'HISTOGRAM');
  const plain = text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped');
  // Each run of lines of one name reads as a family of its own: gather them.
  for (const family of parse(plain)) {
    if (!histograms.some((histogram) => family.name.startsWith(`${histogram.name}_`))) continue;
    const gathered = families.get(family.name);
    if (gathered) gathered.metrics.push(...family.metrics);
    else families.set(family.name, { ...family, type: 'HISTOGRAM' });
  }
  return families;
}

/** The value of one sample of a family (its labels matching), 0 when there is none yet. */
export function sample(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family = families.get(name);
  const found = family?.metrics.find((metric) =>
    Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value),
  );
  return Number(found?.value ?? found?.count ?? 0);
}
