import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Failure, Loading } from './shared.js';

interface Overview {
  name: string;
  version: string;
  mode: string;
  modeSource: string;
  runtime: string;
  port: number | null;
  portSource: string | null;
  uptimeSeconds: number;
  details: Record<string, string | number>;
  routes: Array<{ method: string; path: string; module: string; auth: string; summary: string }>;
}

const uptime = (seconds: number): string => {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return h ? `${h} h ${m} min` : m ? `${m} min ${seconds % 60} s` : `${seconds} s`;
};

export function OverviewPage() {
  const [data, setData] = useState<Overview>();
  const [error, setError] = useState<Error>();
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
          {data.name} {data.version}
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
        <dd>{uptime(data.uptimeSeconds)}</dd>
        {Object.entries(data.details).map(([key, value]) => (
          <>
            <dt>{key}</dt>
            <dd>{String(value)}</dd>
          </>
        ))}
      </dl>
      <h3>Routes ({data.routes.length})</h3>
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
              <td>{route.auth}</td>
              <td>{route.summary}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
