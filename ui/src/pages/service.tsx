import { Fragment } from 'preact';
import { useReport } from '../use-report.js';
import { Failure, Loading, Unavailable } from './shared.js';

const labels: Record<string, string> = {
  manager: 'Manager',
  scope: 'Scope',
  unit: 'Unit',
  file: 'Unit file',
  loaded: 'Loaded',
  active: 'Active',
  pid: 'Process id',
  since: 'Since',
  port: 'Port',
  logs: 'Logs',
};

const show = (value: unknown): string =>
  value === null || value === undefined
    ? '—'
    : typeof value === 'boolean'
      ? value
        ? 'yes'
        : 'no'
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);

/** The operating-system service this server runs as, if any, refreshed every 2 s. */
export function ServicePage() {
  const { report, error } = useReport<Record<string, unknown>>('/admin/service');
  const body = error ? (
    <Failure error={error} />
  ) : !report ? (
    <Loading />
  ) : !report.available ? (
    <Unavailable message={report.message} />
  ) : (
    <dl class="facts">
      {Object.entries(report)
        .filter(([key]) => key !== 'available')
        .map(([key, value]) => (
          <Fragment key={key}>
            <dt>{labels[key] ?? key}</dt>
            <dd>{key === 'logs' || key === 'file' ? <code>{show(value)}</code> : show(value)}</dd>
          </Fragment>
        ))}
    </dl>
  );
  return (
    <section>
      <h2>Service</h2>
      {body}
    </section>
  );
}
