import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Backups } from './backups.js';
import { LoadCharts } from './load-charts.js';
import { Failure, Loading, Scroll } from './shared.js';
import type { SettingEntry } from '../../../src/core/route.js';

interface Overview {
  name: string;
  version: string;
  mode: string;
  modeSource: string;
  runtime: string;
  port: number | null;
  portSource: string | null;
  startedAt: number;
  uptimeSeconds: number;
  details: Record<string, string | number>;
  settings: SettingEntry[];
  routes: Array<{ method: string; path: string; module: string; auth: string; summary: string }>;
}

/** A setting's value as the table shows it: a secret only as set, nothing as unset. */
function SettingValue({ entry }: { entry: SettingEntry }) {
  if (entry.secret) return <span class="badge">set, not shown</span>;
  if (entry.value === null || entry.value === undefined) return <small>unset</small>;
  return <code>{typeof entry.value === 'string' ? entry.value : JSON.stringify(entry.value)}</code>;
}

const uptime = (seconds: number): string => {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : m ? `${m} min ${s} s` : `${s} s`;
};

/** Uptime as the server said it, counted on by this page's clock (not the server's, which may differ). */
function useUptime(data: Overview | undefined): number {
  const [receivedAt, setReceivedAt] = useState(Date.now());
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    setReceivedAt(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [data]);
  return (data?.uptimeSeconds ?? 0) + Math.max(0, Math.floor((now - receivedAt) / 1000));
}

/** What runs: version, mode, port and where it came from, uptime, every setting and its source, and every route. */
export function OverviewPage() {
  const [data, setData] = useState<Overview>();
  const [error, setError] = useState<Error>();
  const seconds = useUptime(data);
  useEffect(() => {
    api<Overview>('/admin/overview').then(setData, setError);
  }, []);
  if (error) return <Failure error={error} />;
  if (!data) return <Loading />;
  return (
    <section>
      <h2>Overview</h2>
      <dl class="facts">
        <dt>App</dt>
        <dd>
          {data.name} {data.version} <small>({data.runtime})</small>
        </dd>
        <dt>Mode</dt>
        <dd>
          {data.mode} <small>({data.modeSource})</small>
        </dd>
        <dt>Port</dt>
        <dd>
          {data.port ?? '—'} <small>({data.portSource ?? 'unknown'})</small>
        </dd>
        <dt>Uptime</dt>
        <dd>
          {uptime(seconds)} <small>(since {new Date(data.startedAt).toLocaleString()})</small>
        </dd>
        {Object.entries(data.details).map(([key, value]) => (
          <Fragment key={key}>
            <dt>{key}</dt>
            <dd>{String(value)}</dd>
          </Fragment>
        ))}
      </dl>
      <LoadCharts />
      <Backups />
      <h3>Settings ({data.settings.length})</h3>
      <Scroll>
        <table class="settings">
          <thead>
            <tr>
              <th>Setting</th>
              <th>Value</th>
              <th>From</th>
              <th>Module</th>
              <th>A reload applies it</th>
            </tr>
          </thead>
          <tbody>
            {data.settings.map((entry) => (
              <tr key={entry.setting}>
                <td>{entry.setting}</td>
                <td>
                  <SettingValue entry={entry} />
                </td>
                <td>{entry.source}</td>
                <td>{entry.module}</td>
                <td>{entry.reload ? 'yes' : 'restart'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
      <h3>Routes ({data.routes.length})</h3>
      <Scroll>
        <table class="routes">
          <thead>
            <tr>
              <th>Method</th>
              <th>Path</th>
              <th>Module</th>
              <th>Access</th>
              <th>Summary</th>
            </tr>
          </thead>
          <tbody>
            {data.routes.map((route) => (
              <tr key={`${route.method} ${route.path}`}>
                <td>
                  <span class={`method ${route.method.toLowerCase()}`}>{route.method}</span>
                </td>
                <td>
                  <code>{route.path}</code>
                </td>
                <td>{route.module}</td>
                <td>{route.auth === 'admin' ? <span class="badge">admin token</span> : route.auth}</td>
                <td>{route.summary}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
    </section>
  );
}
