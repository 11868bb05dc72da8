import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
});
