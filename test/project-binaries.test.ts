import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { io as connect } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { berthBin, bookshopBin, repoRoot, run, startBinary, tempDir } from './helpers/processes.js';

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

describe('the berth command', () => {
  it('runs from its bundle (dist/bundle) and prints Berth’s own version', async () => {
    expect(readFileSync(join(repoRoot, 'bin', 'berth'), 'utf8')).toContain('../dist/bundle/berth.cjs');
    const { version: expected } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    const version = run(berthBin, ['--version'], { cwd: tempDir() });
    expect((await version.exited).code).toBe(0);
    expect(version.stdout().trim()).toBe(expected);
  });
});

describe('berth new', () => {
  const token = 'scaffold-test-admin-token-0123456789';

  it('scaffolds a JavaScript project whose notes collection is a whole, owner-scoped resource, with a passing test', async () => {
    const parent = tempDir();
    const dir = join(parent, 'my-api');
    const created = run(berthBin, ['new', dir], { cwd: parent });
    expect((await created.exited).code).toBe(0);
    expect(created.stdout()).toContain('created my-api (JavaScript)');
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      bin: object;
      scripts: Record<string, string>;
    };
    expect(manifest.bin).toEqual({ 'my-api': 'bin/my-api' });
    expect(manifest.scripts.test).toBe('berth test test');
    expect(statSync(join(dir, 'bin', 'my-api')).mode & 0o111).not.toBe(0);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('## Adding a collection');

    await exec('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: dir });
    const tested = await exec('npm', ['test'], { cwd: dir });
    // TAP on Node.js 20, the spec reporter on 22 and later.
    expect(tested.stdout).toMatch(/[#ℹ] pass 1\b/);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...manifest, version: '1.2.3' }, null, 2));
    const version = run(join(dir, 'bin', 'my-api'), ['--version'], { cwd: dir });
    await version.exited;
    expect(version.stdout().trim()).toBe('1.2.3');

    const server = await startBinary(join(dir, 'bin', 'my-api'), {
      cwd: dir,
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token },
    });
    expect(server.stdout()).toMatch(/route GET +\/notes\n/);
    expect(server.stdout()).toMatch(/route GET +\/notes-summary/);
    // Notes are private: sign up and log in first.
    const post = (path: string, body: unknown, bearer?: string) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        },
        body: JSON.stringify(body),
      });
    const credentials = { email: 'ada@example.org', password: 'a long enough password' };
    expect((await post('/auth/signup', credentials)).status).toBe(201);
    const { token: userToken } = (await (await post('/auth/login', credentials)).json()) as { token: string };
    expect((await fetch(`${server.url}/notes`)).status).toBe(401);
    const socket = connect(server.url, {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      auth: { token: userToken },
    });
    await new Promise<void>((done) => socket.once('connect', () => done()));
    expect(await socket.emitWithAck('subscribe', 'notes')).toMatchObject({
      ok: true,
      topic: 'notes',
      seq: expect.any(Number),
    });
    const event = new Promise<{ title: string; done: boolean }>((done) => socket.once('notes:created', done));
    const posted = await post('/notes', { title: 'First note' }, userToken);
    expect(posted.status).toBe(201);
    expect(await event).toMatchObject({ title: 'First note', done: false });
    socket.disconnect();
    const mine = { headers: { authorization: `Bearer ${userToken}` } };
    const list = (await (await fetch(`${server.url}/notes?done=false&sort=title`, mine)).json()) as {
      total: number;
    };
    expect(list.total).toBe(1);
    expect(await (await fetch(`${server.url}/notes-summary`, mine)).json()).toEqual({ open: 1, done: 0 });
    // The admin token sees every user's notes.
    const all = await fetch(`${server.url}/notes`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await all.json()) as { total: number }).total).toBe(1);
    const docs = (await (await fetch(`${server.url}/docs`)).json()) as { paths: Record<string, object> };
    expect(Object.keys(docs.paths)).toEqual(
      expect.arrayContaining(['/notes', '/notes/{id}', '/notes-summary']),
    );
    // With no test left (its folder gone too, as git keeps no empty folder), npm test passes and says so.
    rmSync(join(dir, 'test'), { recursive: true });
    const none = await exec('npm', ['test'], { cwd: dir });
    expect(none.stdout).toContain('no test files in test: nothing to run');
  }, 90_000); // it runs the scaffold's own test in a child process: 20 s on a quiet machine

  it('scaffolds a TypeScript project with --ts: it compiles, its test passes, and it serves /notes', async () => {
    const parent = tempDir();
    const dir = join(parent, 'typed-api');
    const created = run(berthBin, ['new', dir, '--ts'], { cwd: parent });
    expect((await created.exited).code).toBe(0);
    expect(created.stdout()).toContain('created typed-api (TypeScript)');
    expect(existsSync(join(dir, 'tsconfig.json'))).toBe(true);
    expect(existsSync(join(dir, 'src', 'modules', 'notes.ts'))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      allowScripts: Record<string, boolean>;
    };
    expect(manifest.allowScripts).toMatchObject({ berth: true, 'better-sqlite3': true });
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('compiles (npm run build), then runs ./bin/typed-api start');
    expect(readme).not.toContain('the same as ./bin/typed-api start');
    const installed = await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: dir,
    });
    // npm 11 warns of each dependency whose install script allowScripts does not cover.
    expect(installed.stderr).not.toMatch(/berth@[^\n]*\(prepare|better-sqlite3@[^\n]*\(install/);
    // The README's claim: right after npm install, ./bin/typed-api start serves (npm install compiled it).
    const server = await startBinary(join(dir, 'bin', 'typed-api'), { cwd: dir, env: { PORT: '0' } });
    // Private by default: anonymous callers are told to sign in.
    expect((await fetch(`${server.url}/notes`)).status).toBe(401);
    expect((await fetch(`${server.url}/auth/me`)).status).toBe(401);
    const tested = await exec('npm', ['test'], { cwd: dir });
    expect(tested.stdout).toMatch(/[#ℹ] pass 1\b/);

    // The user deletes the example module and its test and writes their own: the old test's
    // compiled copy must not run (it did, from a dist/ never emptied, and failed).
    rmSync(join(dir, 'src', 'modules', 'notes.ts'));
    rmSync(join(dir, 'test', 'notes.test.ts'));
    writeFileSync(
      join(dir, 'src', 'app.ts'),
      readFileSync(join(dir, 'src', 'app.ts'), 'utf8')
        .replace("import { notesModule } from './modules/notes.js';\n", '')
        .replace(', notesModule]', ']'),
    );
    writeFileSync(
      join(dir, 'test', 'me.test.ts'),
      `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { app } from '../src/app.js';

test('anonymous callers are asked to sign in', async () => {
  assert.equal((await app.request('/auth/me')).status, 401);
  assert.equal((await app.request('/notes')).status, 404);
});
`,
    );
    const retested = await exec('npm', ['test'], { cwd: dir });
    expect(retested.stdout).toMatch(/[#ℹ] pass 1\n/);
    expect(retested.stdout).toMatch(/[#ℹ] fail 0\n/);
    expect(existsSync(join(dir, 'dist', 'test', 'notes.test.js'))).toBe(false);
    // And with no test at all: the build makes no dist/test, and npm test passes, saying so.
    rmSync(join(dir, 'test'), { recursive: true });
    const none = await exec('npm', ['test'], { cwd: dir });
    expect(none.stdout).toContain('no test files in dist/test: nothing to run');
  }, 240_000); // two npm tests and an install that builds Berth (its prepare): 2 min under load

  it('refuses a directory that is not empty and writes nothing', async () => {
    const parent = tempDir();
    const again = run(berthBin, ['new', parent], { cwd: parent });
    expect((await again.exited).code).toBe(0);
    const refused = run(berthBin, ['new', parent], { cwd: parent });
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderr()).toMatch(/is not empty: choose a new directory, nothing was written/);
  });
});
