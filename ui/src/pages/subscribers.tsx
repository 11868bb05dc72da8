import { useReport } from '../use-report.js';
import { Scroll } from './shared.js';

/** A connected client's subscriptions, as `/admin/realtime` lists them where the server reports them. */
export interface Subscriber {
  client: string;
  /** `<via>:<id>` of who the client is; null when it sent no token. */
  caller: string | null;
  /** Each subscription: its topic, the seq it has been given up to, and a live query's query string. */
  topics: Array<{ topic: string; seq: number; query?: string }>;
}

/**
 * Who is subscribed, and how far along the change log each subscription is,
 * refreshed every 2 s; nothing at all where the realtime report has no
 * subscribers (no realtime here, or a server that does not report them).
 */
export function Subscribers() {
  const { report } = useReport<{ subscribers?: Subscriber[] }>('/admin/realtime');
  if (!report?.available || !Array.isArray(report.subscribers)) return null;
  const subscribers = report.subscribers;
  return (
    <section aria-labelledby="subscribers-title">
      <h3 id="subscribers-title">Subscribers ({subscribers.length})</h3>
      {subscribers.length === 0 ? (
        <p class="empty">No client is subscribed.</p>
      ) : (
        <Scroll>
          <table class="subscribers">
            <thead>
              <tr>
                <th>Client</th>
                <th>Caller</th>
                <th>Topic</th>
                <th>Position (seq)</th>
                <th>Live query</th>
              </tr>
            </thead>
            <tbody>
              {subscribers.flatMap((subscriber) => {
                const who = () => [
                  <td key="client">
                    <code>{subscriber.client}</code>
                  </td>,
                  <td key="caller">
                    {subscriber.caller === null ? <small>anonymous</small> : <code>{subscriber.caller}</code>}
                  </td>,
                ];
                // A client subscribed to nothing yet still shows, on a row of its own.
                if (subscriber.topics.length === 0) {
                  return [
                    <tr key={subscriber.client}>
                      {who()}
                      <td colSpan={3}>
                        <small>no subscription</small>
                      </td>
                    </tr>,
                  ];
                }
                return subscriber.topics.map((topic) => (
                  <tr key={`${subscriber.client} ${topic.topic}?${topic.query ?? ''}`}>
                    {who()}
                    <td>
                      <code>{topic.topic}</code>
                    </td>
                    <td>{topic.seq}</td>
                    <td>{topic.query === undefined ? '' : <code>{topic.query}</code>}</td>
                  </tr>
                ));
              })}
            </tbody>
          </table>
        </Scroll>
      )}
    </section>
  );
}
