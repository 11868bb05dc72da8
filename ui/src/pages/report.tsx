import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Failure, Loading } from './shared.js';

type Report = { available: boolean; message?: string } & Record<string, unknown>;

/** Polls an admin report every 2 s while the page is open. */
export function useReport(path: string): { report?: Report; error?: Error } {
  const [report, setReport] = useState<Report>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    let live = true;
    const load = () =>
      api<Report>(path).then(
        (value) => live && (setReport(value), setError(undefined)),
        (failure: Error) => live && setError(failure),
      );
    void load();
    const timer = setInterval(load, 2000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [path]);
  return { report, error };
}

export function Unavailable({ message }: { message?: string }) {
  return (
    <p class="placeholder" role="status">
      {message ?? 'Not available on this server.'}
    </p>
  );
}

export function RealtimePage() {
  const { report, error } = useReport('/admin/realtime');
  if (error) return <Failure error={error} />;
  if (!report) return <Loading />;
  if (!report.available) return <Unavailable message={report.message} />;
  const clients = report.clients as Array<{
    id: string;
    transport: string;
    address: string;
    connectedAt: string;
  }>;
  const recent = report.recent as Array<{
    at: string;
    clientId: string;
    channel: string;
    direction: string;
    data: string;
  }>;
  return (
    <section>
      <h2>Realtime</h2>
      <p>
        Redis fan-out: <strong>{String(report.redis ?? 'not configured')}</strong>
      </p>
      <h3>Connected clients ({clients.length})</h3>
      <table>
        <thead>
          <tr>
            <th>Client</th>
            <th>Transport</th>
            <th>Address</th>
            <th>Since</th>
          </tr>
        </thead>
        <tbody>
          {clients.map((client) => (
            <tr key={client.id}>
              <td>
                <code>{client.id}</code>
              </td>
              <td>{client.transport}</td>
              <td>{client.address}</td>
              <td>{new Date(client.connectedAt).toLocaleTimeString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Recent messages</h3>
      <ol class="messages">
        {recent.map((message, index) => (
          <li key={index}>
            <time>{new Date(message.at).toLocaleTimeString()}</time> {message.direction === 'in' ? '→' : '←'}{' '}
            <code>{message.channel}</code> {message.data} <small>{message.clientId}</small>
          </li>
        ))}
      </ol>
    </section>
  );
}

export function ServicePage() {
  const { report, error } = useReport('/admin/service');
  if (error) return <Failure error={error} />;
  if (!report) return <Loading />;
  if (!report.available) return <Unavailable message={report.message} />;
  const { available: _available, ...facts } = report;
  return (
    <section>
      <h2>Service</h2>
      <dl class="facts">
        {Object.entries(facts).map(([key, value]) => (
          <>
            <dt>{key}</dt>
            <dd>{String(value ?? '—')}</dd>
          </>
        ))}
      </dl>
    </section>
  );
}
