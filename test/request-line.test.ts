import { describe, expect, it, vi } from 'vitest';
import { requestLineWriter } from '../src/node/runtime/logger.js';

describe('the release request line', () => {
  const written = (entries: Parameters<ReturnType<typeof requestLineWriter>>[0][]) => {
    const lines: string[] = [];
    const write = requestLineWriter('berth', (line) => lines.push(line));
    for (const entry of entries) write(entry);
    return lines.map((line) => {
      expect(line.endsWith('\n')).toBe(true);
      return JSON.parse(line) as Record<string, unknown>;
    });
  };
  const entry = { requestId: 'r-1', method: 'GET', status: 200, durationMs: 0.25 };

  it('keeps paths that need escaping exact, and plain ones as they are', () => {
    const paths = ['/books', '/a"b', '/back\\slash', '/tab\there', '/é/✓', '/\u0001', '/\ud800lone'];
    const lines = written(paths.map((path) => ({ ...entry, path })));
    expect(lines.map((line) => line.path)).toEqual(paths.map((path) => JSON.parse(JSON.stringify(path))));
    expect(lines[0]).toMatchObject({
      level: 30,
      pid: process.pid,
      name: 'berth',
      requestId: 'r-1',
      method: 'GET',
      status: 200,
      durationMs: 0.25,
      msg: 'request',
    });
  });

  it('writes the time of each line, made once per millisecond', () => {
    vi.useFakeTimers({ now: new Date('2026-11-25T10:00:00.000Z') });
    try {
      const times: unknown[] = [];
      const write = requestLineWriter('berth', (line) => times.push(JSON.parse(line).time));
      write({ ...entry, path: '/' });
      write({ ...entry, path: '/' });
      vi.setSystemTime(new Date('2026-11-25T10:00:00.007Z'));
      write({ ...entry, path: '/' });
      expect(times).toEqual([
        '2026-11-25T10:00:00.000Z',
        '2026-11-25T10:00:00.000Z',
        '2026-11-25T10:00:00.007Z',
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});
