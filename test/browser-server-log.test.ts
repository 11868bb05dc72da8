import { describe, expect, it } from 'vitest';
import { createBrowserServer } from '../src/browser/browser-server.js';
import { silentLogger, usersModule, type Logger } from '../src/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';

/** The silent logger, but keeping what it is given at info level. */
function recordingLogger() {
  const infos: Array<{ entry: unknown; message: string | undefined }> = [];
  const logger: Logger = {
    ...silentLogger,
    info: (entry, message) => void infos.push({ entry, message }),
  };
  return { logger, infos };
}

describe('the in-browser server’s request log', () => {
  it('writes an entry per request to a logger it is given (and makes none without one)', async () => {
    const { logger, infos } = recordingLogger();
    const logged = createBrowserServer({
      modules: [usersModule],
      storage: openSqliteStorage(':memory:'),
      logger,
    });
    const response = await logged.fetch('/users?limit=5');
    expect(response.status).toBe(200);
    const requests = infos.filter(({ message }) => message === 'request');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.entry).toMatchObject({
      method: 'GET',
      path: '/users',
      status: 200,
      route: '/users',
      requestId: response.headers.get('x-request-id'),
    });

    // Without a logger nothing is there to read the entries: the requests are answered the same.
    const silent = createBrowserServer({ modules: [usersModule], storage: openSqliteStorage(':memory:') });
    expect((await silent.fetch('/users?limit=5')).status).toBe(200);
  });
});
