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

const keep = 50;

/** Keeps the connected clients and the last 50 messages, for `/admin/realtime`. */
export class RealtimeMonitor {
  readonly #clients = new Map<string, ClientEntry>();
  readonly #recent: MessageEntry[] = [];

  connected(id: string, transport: string, address: string): void {
    this.#clients.set(id, { id, transport, address, connectedAt: new Date().toISOString() });
  }

  transportChanged(id: string, transport: string): void {
    const client = this.#clients.get(id);
    if (client) client.transport = transport;
  }

  disconnected(id: string): void {
    this.#clients.delete(id);
  }

  message(clientId: string, channel: string, direction: 'in' | 'out', data: unknown): void {
    const text =
      data instanceof Uint8Array
        ? `<${data.byteLength} bytes>`
        : typeof data === 'string'
          ? data
          : JSON.stringify(data);
    this.#recent.push({
      at: new Date().toISOString(),
      clientId,
      channel,
      direction,
      data: text.length > 200 ? `${text.slice(0, 200)}…` : text,
    });
    if (this.#recent.length > keep) this.#recent.splice(0, this.#recent.length - keep);
  }

  get clientCount(): number {
    return this.#clients.size;
  }

  report(): { available: true; clients: ClientEntry[]; recent: MessageEntry[] } {
    return { available: true, clients: [...this.#clients.values()], recent: [...this.#recent].reverse() };
  }
}
