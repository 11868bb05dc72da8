import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBerthApp } from '../src/berth-app.js';
import { withBerthModules } from '../src/modules/berth-modules.js';
import { berthBin, freePort, run, startBinary, tempDir } from './helpers/processes.js';

describe('berth start (real process, real socket)', () => {
  it('serves books on the port from PORT and logs every route, then the address', async () => {
    const cwd = tempDir();
    const port = await freePort();
    const server = await startBinary(berthBin, { cwd, env: { PORT: String(port) } });
    expect(server.port).toBe(port);
    const response = await fetch(`${server.url}/books`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { total: number };
    expect(page.total).toBe(7);

    const out = server.stdout();
    const routes = [...out.matchAll(/route (GET|POST|PUT|PATCH|DELETE) +(\S+)/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    const served = withBerthModules(createBerthApp(), { realtimePath: 'socket.io', metrics: true });
    expect(routes).toEqual(served.routes.map(({ route }) => `${route.method} ${route.path}`));
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /books',
        'GET /socket.io/*',
        'POST /socket.io/*',
        'GET /docs',
        'GET /',
        'POST /',
      ]),
    );
    expect(out.lastIndexOf('route ')).toBeLessThan(out.indexOf('listening on'));
    expect(out).toContain(`listening on http://localhost:${port} (port from the environment variable PORT)`);
  });

  it('takes the port from berth.config.json, .env and --port, in that order of strength', async () => {
    const cwd = tempDir();
    const [a, b, c] = [await freePort(), await freePort(), await freePort()];
    writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ port: a }));
    const fromConfig = await startBinary(berthBin, { cwd });
    expect(fromConfig.port).toBe(a);
    expect(fromConfig.output()).toContain('(port from "port" in');
    fromConfig.child.kill('SIGTERM');
    await fromConfig.exited;

    writeFileSync(join(cwd, '.env'), `PORT=${b}\n`);
    const fromDotenv = await startBinary(berthBin, { cwd });
    expect(fromDotenv.port).toBe(b);
    expect(fromDotenv.output()).toContain('(port from PORT in .env)');
    fromDotenv.child.kill('SIGTERM');
    await fromDotenv.exited;

    const fromFlag = await startBinary(berthBin, {
      cwd,
      args: ['--port', String(c)],
      env: { PORT: String(a) },
    });
    expect(fromFlag.port).toBe(c);
    expect((await fetch(`${fromFlag.url}/books?limit=1`)).status).toBe(200);
  });

  it('a bad port is one clear line and a non-zero exit', async () => {
    const cwd = tempDir();
    const bad = run(berthBin, ['start'], { cwd, env: { PORT: 'eighty' } });
    const { code } = await bad.exited;
    expect(code).toBe(1);
    expect(bad.stderr()).toBe(
      'berth: invalid port "eighty" from the environment variable PORT: use a whole number from 1 to 65535 (0 picks a free port)\n',
    );
  });

  it('a port in use is one clear line naming the source', async () => {
    const cwd = tempDir();
    const blocker = createServer();
    await new Promise<void>((done) => blocker.listen(0, done));
    const { port } = blocker.address() as { port: number };
    try {
      writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ port }));
      const busy = run(berthBin, ['start'], { cwd });
      expect((await busy.exited).code).toBe(1);
      expect(busy.stderr()).toMatch(
        new RegExp(
          `^berth: port ${port} \\(from "port" in .*berth\\.config\\.json\\) is already in use: stop the program using it or choose another port\\n$`,
        ),
      );
    } finally {
      blocker.close();
    }
  });

  it('--help lists the commands; an unknown command exits 2', async () => {
    const cwd = tempDir();
    const help = run(berthBin, ['--help'], { cwd });
    expect((await help.exited).code).toBe(0);
    expect(help.stdout()).toMatch(/start \[options\]\s+start the HTTP server/);
    expect(help.stdout()).toMatch(/new \[options\] <dir>/);
    const unknown = run(berthBin, ['launch'], { cwd });
    expect((await unknown.exited).code).toBe(2);
    expect(unknown.stderr()).toContain("unknown command 'launch'");
  });

  it('debug mode by default: readable lines and how to switch', async () => {
    const cwd = tempDir();
    const server = await startBinary(berthBin, { cwd, env: { PORT: '0' } });
    await fetch(`${server.url}/books/missing`);
    await server.waitFor(/GET \/books\/missing → 404/);
    expect(server.stdout()).toContain('debug mode is on');
    expect(server.stdout()).toContain('set BERTH_MODE=release (or NODE_ENV=production)');
    expect(server.stdout()).not.toMatch(/^\{/m);
  });

  it('release mode: one JSON line per request, no stack in answers', async () => {
    const cwd = tempDir();
    const server = await startBinary(berthBin, { cwd, env: { PORT: '0', BERTH_MODE: 'release' } });
    await fetch(`${server.url}/books?limit=2`, { headers: { 'x-request-id': 'req-42' } });
    const problem = (await (await fetch(`${server.url}/nope`)).json()) as Record<string, unknown>;
    expect(problem).not.toHaveProperty('stack');
    await server.waitFor(/"path":"\/nope"/);
    const lines = server
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = lines.filter((line) => line.msg === 'request');
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({ method: 'GET', path: '/books', status: 200, requestId: 'req-42' });
    expect(typeof requests[0]!.durationMs).toBe('number');
    expect(requests[1]).toMatchObject({ path: '/nope', status: 404 });
    expect(lines.filter((line) => line.msg === 'route')).toHaveLength(
      withBerthModules(createBerthApp(), { realtimePath: 'socket.io', metrics: true }).routes.length,
    );
  });

  it('release mode: under load and at shutdown every line is written whole, once and in order', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', BERTH_MODE: 'release' },
    });
    // Enough lines to cross the 4 KiB batches the log is written in, some of them at once.
    for (let i = 0; i < 4; i++) {
      await Promise.all(
        Array.from({ length: 15 }, (_, j) =>
          fetch(`${server.url}/books?limit=1`, { headers: { 'x-request-id': `load-${i * 15 + j}` } }),
        ),
      );
    }
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    const lines = server
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const ids = lines.filter((line) => line.msg === 'request').map((line) => line.requestId);
    expect(new Set(ids)).toEqual(new Set(Array.from({ length: 60 }, (_, i) => `load-${i}`)));
    expect(ids).toHaveLength(60);
    const messages = lines.map((line) => String(line.msg));
    const shutting = messages.findIndex((message) => message.startsWith('shutting down'));
    expect(shutting).toBeGreaterThan(messages.lastIndexOf('request'));
    expect(messages.at(-1)).toBe('stopped');
  });

  it('NODE_ENV=production also means release mode', async () => {
    const server = await startBinary(berthBin, {
      cwd: tempDir(),
      env: { PORT: '0', NODE_ENV: 'production' },
    });
    expect(server.stdout()).toContain('"msg":"release mode"');
  });

  it('on a terminal, the first start makes an admin token, prints it once and keeps only its hash', async () => {
    const cwd = tempDir();
    const first = await startBinary(berthBin, { cwd, env: { PORT: '0' }, terminal: true });
    const token = /admin token created, shown only this once, keep it safe: (\S+)/.exec(first.stdout())?.[1];
    expect(token).toBeTruthy();
    const file = join(cwd, 'data', 'admin-token.json');
    expect(readFileSync(file, 'utf8')).not.toContain(token!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const created = await fetch(`${first.url}/books`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Written', author: 'Me' }),
    });
    expect(created.status).toBe(201);
    first.child.kill('SIGTERM');
    await first.exited;

    const second = await startBinary(berthBin, { cwd, env: { PORT: '0' }, terminal: true });
    expect(second.stdout()).not.toContain('admin token created');
    const list = (await (await fetch(`${second.url}/books?q=Written`)).json()) as { total: number };
    expect(list.total).toBe(1);
  });

  it('without a terminal no token reaches the log; it says how to make one, and `token` does, taken at reload', async () => {
    const cwd = tempDir();
    const server = await startBinary(berthBin, { cwd, env: { PORT: '0', BERTH_MODE: 'release' } });
    expect(server.output()).not.toMatch(/admin token created|adminToken/);
    expect(server.output()).toContain(
      `no admin token yet, so admin routes refuse every request: run \`berth token\` in ${cwd} to make one (it is printed once), then \`berth service reload\` or restart; or set BERTH_ADMIN_TOKEN`,
    );
    expect(existsSync(join(cwd, 'data', 'admin-token.json'))).toBe(false);
    const overview = (authorization?: string) =>
      fetch(`${server.url}/admin/overview`, authorization ? { headers: { authorization } } : {});
    const refused = await overview('Bearer anything-at-all-0123456789');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      detail: 'this server has no admin token yet',
      hint: expect.stringContaining('`token` command'),
    });

    const made = spawnSync(process.execPath, [berthBin, 'token'], { cwd, encoding: 'utf8' });
    expect(made.status).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(made.stderr).toContain('shown only this once');
    expect(readFileSync(join(cwd, 'data', 'admin-token.json'), 'utf8')).not.toContain(token);
    // The running server takes it at its next reload.
    expect((await overview(`Bearer ${token}`)).status).toBe(403);
    server.child.kill('SIGHUP');
    await server.waitFor(/the admin token changed/);
    expect((await overview(`Bearer ${token}`)).status).toBe(200);

    // A second `token` replaces the first.
    const again = spawnSync(process.execPath, [berthBin, 'token'], { cwd, encoding: 'utf8' }).stdout.trim();
    server.child.kill('SIGHUP');
    await server.waitFor(/the admin token changed[\s\S]*the admin token changed/);
    expect((await overview(`Bearer ${token}`)).status).toBe(403);
    expect((await overview(`Bearer ${again}`)).status).toBe(200);
    expect(server.output()).not.toContain(token);
    expect(server.output()).not.toContain(again);
  });

  it('`token` refuses, writing nothing, while BERTH_ADMIN_TOKEN decides', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, '.env'), 'BERTH_ADMIN_TOKEN=a-token-from-the-dotenv-file-123\n');
    const made = spawnSync(process.execPath, [berthBin, 'token'], { cwd, encoding: 'utf8' });
    expect(made.status).toBe(1);
    expect(made.stderr.trim()).toBe(
      'berth: BERTH_ADMIN_TOKEN is set (BERTH_ADMIN_TOKEN in .env) and wins over a stored token, so nothing was written: change it there, or remove it to use tokens made by `berth token`',
    );
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('the data directory is 0700 and the database files 0600 when Berth makes them', async () => {
    const cwd = tempDir();
    const server = await startBinary(berthBin, { cwd, env: { PORT: '0' } });
    await fetch(`${server.url}/books`);
    expect(statSync(join(cwd, 'data')).mode & 0o777).toBe(0o700);
    for (const file of readdirSync(join(cwd, 'data'))) {
      expect({ file, mode: statSync(join(cwd, 'data', file)).mode & 0o777 }).toEqual({ file, mode: 0o600 });
    }
    expect(readdirSync(join(cwd, 'data'))).toEqual(
      expect.arrayContaining(['berth.sqlite', 'berth.sqlite-wal', 'berth.sqlite-shm']),
    );
  });

  it('a .env every user may read that holds BERTH_ADMIN_TOKEN is named at start, with its mode and the chmod to run', async () => {
    const cwd = tempDir();
    const file = join(cwd, '.env');
    writeFileSync(file, `PORT=0\nBERTH_ADMIN_TOKEN=plain-text-admin-token-0123\n`);
    chmodSync(file, 0o644);
    const warning = `"msg":"${file} holds BERTH_ADMIN_TOKEN in plain text and every user of this machine may read it (mode 0644): run \`chmod 600 ${file}\` (owned by the user the server runs as)"`;
    const readable = await startBinary(berthBin, { cwd, env: { BERTH_MODE: 'release' } });
    expect(readable.stdout()).toMatch(/"level":40,.*"mode":"0644"/);
    expect(readable.stdout()).toContain(warning);
    readable.child.kill('SIGTERM');
    await readable.exited;

    chmodSync(file, 0o600);
    const ownerOnly = await startBinary(berthBin, { cwd, env: { BERTH_MODE: 'release' } });
    expect(ownerOnly.stdout()).not.toContain('in plain text');
    ownerOnly.child.kill('SIGTERM');
    await ownerOnly.exited;

    // The token from the real environment wins over .env: nothing read from the file is exposed.
    chmodSync(file, 0o644);
    const fromEnvironment = await startBinary(berthBin, {
      cwd,
      env: { BERTH_MODE: 'release', BERTH_ADMIN_TOKEN: 'from-the-environment-0123' },
    });
    expect(fromEnvironment.stdout()).not.toContain('in plain text');
  });

  it('BERTH_ADMIN_TOKEN sets the token instead', async () => {
    const cwd = tempDir();
    const token = 'a-token-from-the-environment-123';
    const server = await startBinary(berthBin, { cwd, env: { PORT: '0', BERTH_ADMIN_TOKEN: token } });
    expect(server.stdout()).not.toContain('admin token created');
    expect(existsSync(join(cwd, 'data', 'admin-token.json'))).toBe(false);
    const post = (authorization: string) =>
      fetch(`${server.url}/books`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'T', author: 'A' }),
      });
    expect((await post(`Bearer ${token}`)).status).toBe(201);
    expect((await post('Bearer wrong-token')).status).toBe(403);
  });

  it('SIGTERM finishes the request in flight, then exits 0', async () => {
    const cwd = tempDir();
    const token = 'shutdown-test-token-0123456789';
    const server = await startBinary(berthBin, { cwd, env: { PORT: '0', BERTH_ADMIN_TOKEN: token } });
    const body = JSON.stringify({ title: 'Slow upload', author: 'Patient' });
    // A request whose body is still arriving is in flight when SIGTERM lands.
    const answer = new Promise<{ status: number; body: string }>((done, fail) => {
      const req = httpRequest(
        `${server.url}/books`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => done({ status: res.statusCode!, body: text }));
        },
      );
      req.on('error', fail);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 500);
      }, 300);
    });
    const result = await answer;
    expect(result.status).toBe(201);
    expect(JSON.parse(result.body)).toMatchObject({ title: 'Slow upload' });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout()).toContain('shutting down: finishing 1 request(s) in flight');
    // The new connection after shutdown is refused.
    await expect(fetch(`${server.url}/books`)).rejects.toThrow();
  });

  it('the shutdown wait is bounded by BERTH_SHUTDOWN_TIMEOUT', async () => {
    const cwd = tempDir();
    const server = await startBinary(berthBin, {
      cwd,
      env: { PORT: '0', BERTH_ADMIN_TOKEN: 'bounded-shutdown-token-123', BERTH_SHUTDOWN_TIMEOUT: '300' },
    });
    const stalled = httpRequest(`${server.url}/books`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': '100',
        authorization: 'Bearer bounded-shutdown-token-123',
      },
    });
    stalled.on('error', () => {});
    stalled.write('{"tit');
    await new Promise((done) => setTimeout(done, 200));
    const started = Date.now();
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(server.stdout()).toContain('1 request(s) did not finish within 300 ms and were cut off');
  });
});
