import { describe, expect, it } from 'vitest';
import { ConnectionLimiter } from '../src/realtime/limits.js';

describe('the realtime connection limits', () => {
  it('a connection over its address’s limit, held to be told why, takes no place of another address', () => {
    const limiter = new ConnectionLimiter(3, 2);
    limiter.opened('203.0.113.7');
    limiter.opened('203.0.113.7');
    expect(limiter.refusal('203.0.113.7')).toMatch(
      /^203\.0\.113\.7 holds its limit of 2 realtime connections/,
    );
    const released = limiter.refusing('203.0.113.7');
    expect(limiter.refusal('198.51.100.1')).toBeUndefined();
    limiter.opened('198.51.100.1');
    expect(limiter.refusal('198.51.100.2')).toMatch(/^this server holds its limit of 3 realtime connections/);
    released();
    expect(limiter.total).toBe(3);
  });

  it('past the limits by a margin, the connections held to be told why count: the handshake itself is refused', () => {
    const limiter = new ConnectionLimiter(100, 2);
    limiter.opened('203.0.113.7');
    limiter.opened('203.0.113.7');
    const held = Array.from({ length: 3 }, () => limiter.refusing('203.0.113.7'));
    expect(limiter.refusal('203.0.113.7', 4)).toBeUndefined();
    held.push(limiter.refusing('203.0.113.7'));
    expect(limiter.refusal('203.0.113.7', 4)).toMatch(/holds its limit of 2/);
    for (const release of held) release();
    expect(limiter.refusal('203.0.113.7', 4)).toBeUndefined();
  });
});
