import { Failure, Unavailable } from './shared.js';
import { useReport } from '../use-report.js';

interface LoadPoint {
  at: string;
  perSecond: number;
  errorRate: number;
  p95Ms: number | null;
}

type Load = { intervalSeconds: number; points: LoadPoint[] };

const width = 240;
const height = 60;

/** The path of a line through the values (nulls leave a gap), scaled to the chart. */
function linePath(values: Array<number | null>, top: number): string {
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  let path = '';
  let drawing = false;
  values.forEach((value, index) => {
    if (value === null) {
      drawing = false;
      return;
    }
    const x = (index * step).toFixed(1);
    const y = (height - 2 - (value / top) * (height - 4)).toFixed(1);
    path += `${drawing ? 'L' : 'M'}${x},${y}`;
    drawing = true;
  });
  return path;
}

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
function niceTop(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 5, 10].find((factor) => factor * power >= max) ?? 10) * power;
}

/** One small chart: a title with the latest value, the line, and its scale. */
function Chart({
  title,
  values,
  format,
}: {
  title: string;
  values: Array<number | null>;
  format: (value: number) => string;
}) {
  const known = values.filter((value): value is number => value !== null);
  const latest = known.at(-1);
  const top = niceTop(Math.max(0, ...known));
  const summary =
    latest === undefined
      ? `${title}: no requests yet`
      : `${title}: now ${format(latest)}, highest ${format(Math.max(...known))} over the last ${values.length} points`;
  return (
    <figure class="load-chart">
      <figcaption>
        {title} <strong>{latest === undefined ? '—' : format(latest)}</strong>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary} preserveAspectRatio="none">
        <line x1="0" y1={height - 1} x2={width} y2={height - 1} class="axis" />
        <path d={linePath(values, top)} class="line" />
      </svg>
      <small class="scale">up to {format(top)}</small>
    </figure>
  );
}

const perSecond = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)}/s`;
const percent = (value: number) => `${(value * 100).toFixed(value < 0.1 ? 1 : 0)} %`;
const milliseconds = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`;

/**
 * Requests per second, error rate and p95 latency of the last minutes, from
 * the server's own metrics (`GET /admin/load`), drawn here: no chart library,
 * no request elsewhere.
 */
export function LoadCharts() {
  const { report, error } = useReport<Load>('/admin/load');
  if (error) return <Failure error={error} />;
  if (!report) return null;
  if (!report.available) return <Unavailable message={report.message} />;
  const { points, intervalSeconds } = report;
  const minutes = Math.max(1, Math.round((points.length * intervalSeconds) / 60));
  return (
    <section aria-labelledby="load-title">
      <h3 id="load-title">Load</h3>
      <p class="hint">
        The last {points.length < 2 ? 'few seconds' : `${minutes} min`}, a point every {intervalSeconds} s.
      </p>
      <div class="load-charts">
        <Chart title="Requests" values={points.map((point) => point.perSecond)} format={perSecond} />
        <Chart title="Errors (5xx)" values={points.map((point) => point.errorRate)} format={percent} />
        <Chart title="p95 latency" values={points.map((point) => point.p95Ms)} format={milliseconds} />
      </div>
    </section>
  );
}
