import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { berthBin, bookshopBin, run, startBinary, tempDir } from './helpers/processes.js';

const exec = promisify(execFile);

describe("a project's own binary (examples/bookshop)", () => {
  it('bookshop start serves its own authors module and Berth books', async () => {
    const cwd = tempDir();
    const server = await startBinary(bookshopBin, { cwd, env: { PORT: '0' } });
    const routes = [...server.stdout().matchAll(/route (GET|POST|PATCH|DELETE) +(\S+)/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(routes).toEqual(expect.arrayContaining(['GET /books', 'GET /authors', 'POST /authors']));
    const authors = (await (await fetch(`${server.url}/authors`)).json()) as {
      items: Array<{ name: string }>;
    };
    expect(authors.items.map((a) => a.name)).toContain('Ursula K. Le Guin');
    expect((await fetch(`${server.url}/books?limit=1`)).status).toBe(200);
    const unauthorised = await fetch(`${server.url}/authors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"X"}',
    });
    expect(unauthorised.status).toBe(401);
  });

  it('bookshop --help lists the same commands under its own name', async () => {
    const help = run(bookshopBin, ['--help'], { cwd: tempDir() });
    expect((await help.exited).code).toBe(0);
    expect(help.stdout()).toContain('Usage: bookshop');
    expect(help.stdout()).toMatch(/start \[options\]/);
  });
});

describe('berth new', () => {
  it('scaffolds a project that runs after npm install', async () => {
    const parent = tempDir();
    const dir = join(parent, 'my-api');
    const created = run(berthBin, ['new', dir], { cwd: parent });
    expect((await created.exited).code).toBe(0);
    expect(created.stdout()).toContain('created my-api');
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin: object };
    expect(manifest.bin).toEqual({ 'my-api': 'bin/my-api' });
    expect(statSync(join(dir, 'bin', 'my-api')).mode & 0o111).not.toBe(0);
    expect(existsSync(join(dir, 'README.md'))).toBe(true);

    await exec('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: dir });
    const server = await startBinary(join(dir, 'bin', 'my-api'), { cwd: dir, env: { PORT: '0' } });
    expect(await (await fetch(`${server.url}/hello/world`)).json()).toEqual({ greeting: 'Hello, world!' });
    expect(server.stdout()).toMatch(/route GET +\/hello\/:name/);
  });

  it('refuses a directory that is not empty and writes nothing', async () => {
    const parent = tempDir();
    const again = run(berthBin, ['new', parent], { cwd: parent });
    expect((await again.exited).code).toBe(0);
    const refused = run(berthBin, ['new', parent], { cwd: parent });
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderr()).toMatch(/is not empty: choose a new directory, nothing was written/);
  });
});
