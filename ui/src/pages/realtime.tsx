import { useReport } from '../use-report.js';
import { Failure, Loading, Scroll, Unavailable } from './shared.js';

interface Monitor {
  redis?: string;
  clients: Array<{ id: string; transport: string; address: string; connectedAt: string }>;
  /** Rooms with members on any worker or instance (absent from an older server's report). */
  rooms?: Array<{ channel: string; room: string; members: string[] }>;
  /** Why some workers' or instances' members may be missing from `rooms`. */
  roomsMissing?: string;
  recent: Array<{ at: string; clientId: string; channel: string; direction: 'in' | 'out'; data: string }>;
}

const time = (value: string) => new Date(value).toLocaleTimeString();
/** A room's members named on its row; the count says how many more it has. */
const shownMembers = 10;

/** Connected realtime clients, the rooms with members, and the latest messages, refreshed every 2 s. */
export function RealtimePage() {
  const { report, error } = useReport<Monitor>('/admin/realtime');
  const body = error ? (
    <Failure error={error} />
  ) : !report ? (
    <Loading />
  ) : !report.available ? (
    <Unavailable message={report.message} />
  ) : (
    <>
      {report.redis && (
        <p>
          Redis fan-out: <strong>{report.redis}</strong>
        </p>
      )}
      <h3>Connected clients ({report.clients.length})</h3>
      {report.clients.length === 0 ? (
        <p class="empty">No client is connected.</p>
      ) : (
        <Scroll>
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
              {report.clients.map((client) => (
                <tr key={client.id}>
                  <td>
                    <code>{client.id}</code>
                  </td>
                  <td>{client.transport}</td>
                  <td>{client.address}</td>
                  <td>{time(client.connectedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      {report.rooms && (
        <>
          <h3>Rooms ({report.rooms.length})</h3>
          {report.roomsMissing && <p class="hint">{report.roomsMissing}</p>}
          {report.rooms.length === 0 ? (
            <p class="empty">No room has a member.</p>
          ) : (
            <Scroll>
              <table class="rooms">
                <thead>
                  <tr>
                    <th>Channel</th>
                    <th>Room</th>
                    <th>Members</th>
                    <th>Who</th>
                  </tr>
                </thead>
                <tbody>
                  {report.rooms.map((room) => (
                    <tr key={`${room.channel} ${room.room}`}>
                      <td>
                        <code>{room.channel}</code>
                      </td>
                      <td>
                        <code>{room.room}</code>
                      </td>
                      <td>{room.members.length}</td>
                      <td>
                        {room.members.slice(0, shownMembers).map((member) => (
                          <code key={member}>{member} </code>
                        ))}
                        {room.members.length > shownMembers && (
                          <small>and {room.members.length - shownMembers} more</small>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Scroll>
          )}
        </>
      )}
      <h3>Recent messages ({report.recent.length})</h3>
      {report.recent.length === 0 ? (
        <p class="empty">No message yet.</p>
      ) : (
        <Scroll>
          <table class="messages">
            <thead>
              <tr>
                <th>Time</th>
                <th>Direction</th>
                <th>Channel</th>
                <th>Client</th>
                <th>Data</th>
              </tr>
            </thead>
            <tbody>
              {report.recent.map((message, index) => (
                <tr key={index}>
                  <td>{time(message.at)}</td>
                  <td>{message.direction === 'in' ? 'in (from client)' : 'out (to client)'}</td>
                  <td>
                    <code>{message.channel}</code>
                  </td>
                  <td>
                    <code>{message.clientId}</code>
                  </td>
                  <td class="data">{message.data}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </>
  );
  return (
    <section>
      <h2>Realtime</h2>
      {body}
    </section>
  );
}
