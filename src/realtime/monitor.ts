/** One connected realtime client, as the admin monitor shows it. */
export interface ClientEntry {
  id: string;
  transport: string;
  address: string;
  connectedAt: string;
}

export interface MessageEntry {
  at: string;
  clientId: string;
  channel: string;
  direction: 'in' | 'out';
  data: string;
}

/** A subscribed client, and where each of its subscriptions stands in the change log. */
export interface SubscriberEntry {
  client: string;
  /** `<via>:<id>` of its caller, null when anonymous. */
  caller: string | null;
  topics: Array<{ topic: string; seq: number; query?: string }>;
}

const keep = 50;

interface RawMessage {
  at: number;
  clientId: string;
  channel: string;
  direction: 'in' | 'out';
  data: unknown;
}

const describe = (data: unknown): string => {
  const text =
    data instanceof Uint8Array
      ? `<${data.byteLength} bytes>`
      : typeof data === 'string'
        ? data
        : JSON.stringify(data);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

/**
 * Keeps the connected clients and the last 50 messages, for `/admin/realtime`.
 * Recording is on every message's path, so it only stores references in a
 * ring; formatting waits for a report.
 */
export class RealtimeMonitor {
  /** Each client as `report` shows it, but for when it connected: a number until then (a server keeps thousands). */
  readonly #clients = new Map<string, Omit<ClientEntry, 'connectedAt'> & { connectedAt: number }>();
  readonly #ring: Array<RawMessage | undefined> = new Array(keep);
  #next = 0;
  /** Messages since the start, by direction, for the metrics. */
  readonly messageCounts = { in: 0, out: 0 };
  /** The subscribers, asked at each report (socket.io's subscriptions tell it theirs). */
  subscribers: () => SubscriberEntry[] = () => [];

  connected(id: string, transport: string, address: string): void {
    this.#clients.set(id, { id, transport, address, connectedAt: Date.now() });
  }

  transportChanged(id: string, transport: string): void {
    const client = this.#clients.get(id);
    if (client) client.transport = transport;
  }

  disconnected(id: string): void {
    this.#clients.delete(id);
  }

  message(clientId: string, channel: string, direction: 'in' | 'out', data: unknown): void {
    this.messageCounts[direction]++;
    this.#ring[this.#next] = { at: Date.now(), clientId, channel, direction, data };
    this.#next = (this.#next + 1) % keep;
  }

  get clientCount(): number {
    return this.#clients.size;
  }

  /** Clients, and recent messages newest first. */
  report(): {
    available: true;
    clients: ClientEntry[];
    recent: MessageEntry[];
    subscribers: SubscriberEntry[];
  } {
    const recent: MessageEntry[] = [];
    for (let i = 1; i <= keep; i++) {
      const entry = this.#ring[(this.#next - i + keep) % keep];
      if (!entry) break;
      recent.push({ ...entry, at: new Date(entry.at).toISOString(), data: describe(entry.data) });
    }
    const clients = [...this.#clients.values()].map((client) => ({
      ...client,
      connectedAt: new Date(client.connectedAt).toISOString(),
    }));
    return { available: true, clients, recent, subscribers: this.subscribers() };
  }
}
