import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp, silentLogger } from '../src/core/internal.js';
import { HttpListener } from '../src/node/server/http-listener.js';
import { booksModule } from '../src/modules/books/index.js';
import { instantiate } from './helpers/in-process.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, tempDir } from './helpers/processes.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('start --workers under a service manager', () => {
  it('SIGTERM to every process of the group (as systemd sends it) shuts down once, with PostgreSQL, and exits 0', async () => {
    const schema = await freshSchema();
    const child = spawn(process.execPath, [berthBin, 'start', '--workers', '2'], {
      cwd: tempDir(),
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        BERTH_MODE: 'release',
        BERTH_ADMIN_TOKEN: 'workers-test-admin-token-0123456789',
        DATABASE_URL: `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      },
      // Its own process group, so the test can signal every process of it at once.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    onTestFinished(() => {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    });
    await expect.poll(() => output, { timeout: 20_000 }).toMatch(/listening on http:\/\/localhost:\d+/);
    const port = /listening on http:\/\/localhost:(\d+)/.exec(output)![1];
    const readyWorkers = () =>
      [...output.matchAll(/"msg":"worker (\d+) ready"/g)].map((match) => Number(match[1]));
    await expect.poll(readyWorkers, { timeout: 10_000 }).toHaveLength(2);
    const workers = readyWorkers();
    expect((await fetch(`http://127.0.0.1:${port}/books?limit=1`)).status).toBe(200);

    process.kill(-child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    await expect.poll(() => workers.filter(alive), { timeout: 10_000 }).toEqual([]);
    expect(output).not.toMatch(/shutdown failed|more than once|"level":50/);
  });
});

describe('a worker that has drained takes no more requests', () => {
  it('a connection handed over after the listener closed gets a 503 to retry, never the app with its storage closing', async () => {
    const { instance } = await instantiate(createApp({ name: 'drained', modules: [booksModule] }));
    const listener = new HttpListener(instance, silentLogger);
    expect(await listener.close(1000)).toBe(0);
    // As the primary's balancer does: a connection it accepted, handed to the worker's server.
    const primary = createServer((socket) => listener.server.emit('connection', socket));
    await new Promise<void>((done) => primary.listen(0, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => primary.close(() => done())));
    const { port } = primary.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/books?limit=1`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toMatchObject({
      code: 'BERTH_NOT_READY',
      detail: 'this server is shutting down and takes no more requests: retry in a second',
    });
  });

  it(
    'SIGTERM to --workers 2 under concurrent writes answers no 500 (3 runs)',
    { timeout: 90_000 },
    async () => {
      const statuses = new Map<number, number>();
      for (let run = 0; run < 3; run++) {
        const child = spawn(process.execPath, [berthBin, 'start', '--workers', '2'], {
          cwd: tempDir(),
          env: {
            PATH: process.env.PATH ?? '',
            PORT: '0',
            BERTH_MODE: 'release',
            BERTH_WRITE_LIMIT: '1000000',
            BERTH_ADMIN_TOKEN: 'workers-test-admin-token-0123456789',
          },
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
        onTestFinished(() => {
          if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
        });
        await expect
          .poll(() => output.match(/"msg":"worker \d+ ready"/g)?.length ?? 0, { timeout: 20_000 })
          .toBe(2);
        await expect.poll(() => output, { timeout: 20_000 }).toMatch(/listening on http:\/\/localhost:\d+/);
        const port = /listening on http:\/\/localhost:(\d+)/.exec(output)![1];
        let writing = true;
        const write = async (): Promise<void> => {
          while (writing) {
            try {
              const response = await fetch(`http://127.0.0.1:${port}/books`, {
                method: 'POST',
                headers: {
                  authorization: 'Bearer workers-test-admin-token-0123456789',
                  'content-type': 'application/json',
                },
                body: JSON.stringify({ title: 'During shutdown', author: 'Nobody' }),
              });
              await response.arrayBuffer();
              statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            } catch {
              // Refused once the port is closed: the client retries elsewhere, nothing was acknowledged.
              await new Promise((done) => setTimeout(done, 5));
            }
          }
        };
        const writers = Array.from({ length: 20 }, write);
        await new Promise((done) => setTimeout(done, 700));
        process.kill(-child.pid!, 'SIGTERM');
        expect(await exited).toBe(0);
        writing = false;
        await Promise.all(writers);
      }
      console.info(`statuses over 3 shutdowns under writes: ${JSON.stringify(Object.fromEntries(statuses))}`);
      expect(statuses.get(201)).toBeGreaterThan(0);
      expect([...statuses.keys()].filter((status) => status >= 500 && status !== 503)).toEqual([]);
    },
  );
});
