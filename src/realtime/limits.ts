import { addressBucket } from '../core/internal.js';
import { connectionLimitSettings } from './realtime-settings.js';

const raisedBy = (setting: { variable: string; key: string }): string =>
  `the server's ${setting.variable} (${setting.key} in berth.config.json) raises it`;

/**
 * Counts realtime connections, socket.io and plain WebSocket alike, so one
 * process and one address cannot hold more than their share. Addresses
 * count as HTTP's rate limits count them: IPv4 as it is, IPv6 by its /64.
 */
export class ConnectionLimiter {
  readonly #max: number;
  readonly #maxPerAddress: number;
  #total = 0;
  readonly #byAddress = new Map<string, number>();
  /** Connections over a limit, held only to be told why: counted apart, never against the limits. */
  #refusing = 0;
  readonly #refusingByAddress = new Map<string, number>();

  constructor(max: number, maxPerAddress: number) {
    this.#max = max;
    this.#maxPerAddress = maxPerAddress;
  }

  get total(): number {
    return this.#total;
  }

  /**
   * Why a new connection from `address` is refused, or undefined when it
   * may connect: which limit, and which setting raises it. With `beyond`,
   * only once that many more are open than the limits allow.
   */
  refusal(address: string, beyond = 0): string | undefined {
    const bucket = addressBucket(address);
    // Past the limits by `beyond`: the connections held to be told why count too (they are what is beyond).
    const held = beyond ? this.#refusing : 0;
    const heldHere = beyond ? (this.#refusingByAddress.get(bucket) ?? 0) : 0;
    if (this.#total + held >= this.#max + beyond) {
      return `this server holds its limit of ${this.#max} realtime connections; try again later (${raisedBy(connectionLimitSettings.maxConnections)})`;
    }
    if ((this.#byAddress.get(bucket) ?? 0) + heldHere >= this.#maxPerAddress + beyond) {
      return `${bucket} holds its limit of ${this.#maxPerAddress} realtime connections; close one first (${raisedBy(connectionLimitSettings.maxConnectionsPerIp)})`;
    }
    return undefined;
  }

  /** A connection over a limit, held until it is told why (`released` when it closes). */
  refusing(address: string): () => void {
    const bucket = addressBucket(address);
    this.#refusing++;
    this.#refusingByAddress.set(bucket, (this.#refusingByAddress.get(bucket) ?? 0) + 1);
    return () => {
      this.#refusing--;
      const left = (this.#refusingByAddress.get(bucket) ?? 1) - 1;
      if (left > 0) this.#refusingByAddress.set(bucket, left);
      else this.#refusingByAddress.delete(bucket);
    };
  }

  opened(address: string): void {
    const bucket = addressBucket(address);
    this.#total++;
    this.#byAddress.set(bucket, (this.#byAddress.get(bucket) ?? 0) + 1);
  }

  closed(address: string): void {
    const bucket = addressBucket(address);
    this.#total--;
    const left = (this.#byAddress.get(bucket) ?? 1) - 1;
    if (left > 0) this.#byAddress.set(bucket, left);
    else this.#byAddress.delete(bucket);
  }
}

/**
 * A token bucket for one connection's messages: `perSecond` on average, in
 * bursts of up to twice that. An object with two numbers, where a closure
 * would hold a context too: a server keeps one per connection.
 *
 * @example
 * const rate = new MessageRate(100)
 * if (!rate.allow()) client.close(1008, 'too many messages')
 */
export class MessageRate {
  readonly #perSecond: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;

  constructor(perSecond: number, now: () => number = Date.now) {
    this.#perSecond = perSecond;
    this.#now = now;
    this.#tokens = perSecond * 2;
    this.#last = now();
  }

  /** Whether one more message may pass now. */
  allow(): boolean {
    const time = this.#now();
    const perSecond = this.#perSecond;
    this.#tokens = Math.min(perSecond * 2, this.#tokens + ((time - this.#last) * perSecond) / 1000);
    this.#last = time;
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }
}
