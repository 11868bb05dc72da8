import { describe, expect, it } from 'vitest';
import { addressBucket, memoryRateLimiter } from '../src/core/internal.js';

describe('rate-limit counters', () => {
  it('count in fixed windows, show a count without adding to it, give a hit back, and start over when the window ends', async () => {
    let now = 0;
    const limiter = memoryRateLimiter(() => now);
    expect(await limiter.hit('k', 1000)).toEqual({ count: 1, resetIn: 1000 });
    now = 400;
    expect(await limiter.hit('k', 1000)).toEqual({ count: 2, resetIn: 600 });
    // A look counts nothing.
    expect(await limiter.peek('k')).toEqual({ count: 2, resetIn: 600 });
    expect(await limiter.peek('none')).toEqual({ count: 0, resetIn: 0 });
    await limiter.undo('k');
    expect((await limiter.hit('k', 1000)).count).toBe(2);
    now = 1000;
    expect(await limiter.hit('k', 1000)).toEqual({ count: 1, resetIn: 1000 });
    await limiter.reset('k');
    expect((await limiter.hit('k', 1000)).count).toBe(1);
  });

  it('count IPv6 clients by their /64, IPv4 ones (mapped too) by their address', () => {
    expect(addressBucket('127.0.0.1')).toBe('127.0.0.1');
    expect(addressBucket('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(addressBucket('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:0db8:0000:0001:1:2:3:4')).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressBucket('unknown')).toBe('unknown');
  });
});
