import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createBerthApp } from '../src/berth-app.js';
import { startServer } from '../src/node/server/start.js';
import { berthBin, freePort, startBinary, tempDir } from './helpers/processes.js';
import { loadDuring } from './helpers/load-generator.js';

describe('reload on SIGHUP (what `service reload` sends)', () => {
  it('re-reads .env: a new port answers, the old one closes, and no request fails meanwhile', async () => {
    const cwd = tempDir();
    const [first, second] = [await freePort(), await freePort()];
    writeFileSync(join(cwd, '.env'), `PORT=${first}\nBERTH_BODY_LIMIT=1000\n`);
    const server = await startBinary(berthBin, {
      cwd,
      env: { BERTH_ADMIN_TOKEN: 'reload-test-token-0123456789' },
    });
    expect(server.port).toBe(first);

    const load = loadDuring(`http://127.0.0.1:${first}/books?limit=1`, 20);
    await new Promise((done) => setTimeout(done, 300));
    writeFileSync(join(cwd, '.env'), `PORT=${second}\nBERTH_BODY_LIMIT=5000\n`);
    server.child.kill('SIGHUP');
    await server.waitFor(
      new RegExp(`reloaded: listening on http://localhost:${second} \\(port from PORT in \\.env\\)`),
    );
    expect(server.output()).toContain(
      `reload: applied port ${first} → ${second} (PORT in .env), body limit 1000 → 5000 (BERTH_BODY_LIMIT in .env)`,
    );
    load.retarget(`http://127.0.0.1:${second}/books?limit=1`);
    await new Promise((done) => setTimeout(done, 2500));
    const result = await load.stop();
    expect(result.sent).toBeGreaterThan(100);
    expect(result.failures).toEqual([]);

    expect((await fetch(`http://127.0.0.1:${second}/books?limit=1`)).status).toBe(200);
    await expect(fetch(`http://127.0.0.1:${first}/books?limit=1`)).rejects.toThrow();
    // The new body limit applies: 3000 bytes were over the old 1000-byte limit.
    const big = await fetch(`http://127.0.0.1:${second}/books`, {
      method: 'POST',
      headers: { authorization: 'Bearer reload-test-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({
        title: 'x'.repeat(250),
        author: 'y',
        isbn: null,
        year: null,
        pad: 'z'.repeat(2700),
      }),
    });
    expect(big.status).toBe(422);
  });

  it('a broken config on reload is logged and the server keeps its settings', async () => {
    const cwd = tempDir();
    const port = await freePort();
    writeFileSync(join(cwd, '.env'), `PORT=${port}\n`);
    const server = await startBinary(berthBin, { cwd });
    writeFileSync(join(cwd, '.env'), 'PORT=not-a-port\n');
    server.child.kill('SIGHUP');
    await server.waitFor(
      /reload failed, keeping the running settings: invalid port "not-a-port" from PORT in \.env/,
    );
    expect((await fetch(`http://127.0.0.1:${port}/books?limit=1`)).status).toBe(200);
  });

  it('a new admin token in .env applies at once; settings that need a restart say so and keep their value', async () => {
    const cwd = tempDir();
    const port = await freePort();
    const [oldToken, newToken] = ['reload-old-token-0123456789', 'reload-new-token-0123456789'];
    writeFileSync(join(cwd, '.env'), `PORT=${port}\nBERTH_ADMIN_TOKEN=${oldToken}\n`);
    const server = await startBinary(berthBin, { cwd });
    const adminWith = async (token: string) =>
      (await fetch(`${server.url}/admin/service`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await adminWith(oldToken)).toBe(200);

    writeFileSync(
      join(cwd, '.env'),
      `PORT=${port}\nBERTH_ADMIN_TOKEN=${newToken}\nBERTH_DATA_DIR=./elsewhere\n`,
    );
    server.child.kill('SIGHUP');
    await server.waitFor(/reloaded: listening on/);
    expect(server.output()).toContain(
      `data directory ${join(cwd, 'data')} → ${join(cwd, 'elsewhere')} (BERTH_DATA_DIR in .env): restart the server to apply it; the reload keeps the running value`,
    );
    expect(server.output()).toContain(
      'reload: applied admin token (new value, not shown); a restart applies data directory',
    );
    expect(server.output()).not.toContain(newToken);
    expect(await adminWith(oldToken)).toBe(403);
    expect(await adminWith(newToken)).toBe(200);
  });

  it('two reloads at once run one after the other: the first moves the port, the second finds nothing new', async () => {
    const cwd = tempDir();
    const [first, second] = [await freePort(), await freePort()];
    writeFileSync(join(cwd, '.env'), `PORT=${first}\n`);
    const server = await startServer(createBerthApp(), { cwd, env: {}, logDestination: new PassThrough() });
    onTestFinished(() => server.close());
    writeFileSync(join(cwd, '.env'), `PORT=${second}\n`);
    const [one, two] = await Promise.all([server.reload(), server.reload()]);
    expect(one).toMatchObject({
      count: 1,
      ok: true,
      message: `listening on http://localhost:${second}; applied port ${first} → ${second} (PORT in .env)`,
    });
    expect(two).toMatchObject({
      count: 2,
      ok: true,
      message: `listening on http://localhost:${second}; no setting it applies changed`,
    });
    expect((await fetch(`http://127.0.0.1:${second}/books?limit=1`)).status).toBe(200);
  });
});
