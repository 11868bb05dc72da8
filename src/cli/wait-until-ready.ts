import { closeSync, openSync, readSync, statSync } from 'node:fs';

export type Readiness = { ready: true; afterMs: number } | { ready: false; reason: string };

/** How long `service load` and `service reload` wait for `/readyz`. */
export const readyTimeout = 15_000;

/** What `/readyz` answered, in words: 200, or the problem's detail, or why nothing answered. */
async function askReady(url: string): Promise<{ ok: boolean; said: string }> {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) });
    if (response.ok) return { ok: true, said: '200' };
    const problem = (await response.json().catch(() => undefined)) as { detail?: string } | undefined;
    return { ok: false, said: `${response.status}${problem?.detail ? `: ${problem.detail}` : ''}` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { ok: false, said: `no answer (${cause ?? (error as Error).message})` };
  }
}

/**
 * Polls `GET <url>/readyz` until it answers 200 (storage reachable,
 * migrations done, not draining) or `timeout` ms pass.
 *
 * @example
 * const readiness = await waitUntilReady('http://localhost:4500')
 * if (!readiness.ready) console.error(readiness.reason)
 */
export async function waitUntilReady(url: string, timeout = readyTimeout): Promise<Readiness> {
  const started = Date.now();
  for (;;) {
    const { ok, said } = await askReady(url);
    if (ok) return { ready: true, afterMs: Date.now() - started };
    if (Date.now() - started > timeout) {
      return { ready: false, reason: `GET ${url}/readyz still answers ${said} after ${timeout / 1000} s` };
    }
    await new Promise((done) => setTimeout(done, 250));
  }
}

/** The last `count` lines of a log file (read from its end), or undefined when there is none to read. */
export function lastLogLines(file: string | undefined, count = 20): string | undefined {
  if (!file) return undefined;
  try {
    const size = statSync(file).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    const lines = buffer.toString('utf8').split('\n').filter(Boolean).slice(-count);
    return lines.length ? lines.join('\n') : undefined;
  } catch {
    return undefined;
  }
}
