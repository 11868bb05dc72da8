import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from '../src/storage/sqlite-driver.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../src/core/internal.js';
import { progressLines } from '../src/node/data/backups.js';
import { instantiate } from './helpers/in-process.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, bookshopBin, startBinary, tempDir } from './helpers/processes.js';
import { privatePostgres } from './helpers/private-services.js';

const token = 'backups-admin-token-0123456789';
const auth = { authorization: `Bearer ${token}` };

/** This process's environment without PORT, BERTH_*, DATABASE_URL or REDIS_URL, plus `env`. */
function cleanEnv(env: Record<string, string>): Record<string, string> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(PORT|BERTH_|DATABASE_URL|REDIS_URL)/.test(key)),
  ) as Record<string, string>;
  return { ...clean, ...env };
}

/** Runs a command of the real binary to its end (no PORT, BERTH_* or DATABASE_URL from this process). */
function berth(cwd: string, args: string[], env: Record<string, string> = {}, bin = berthBin) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

/** The same, without blocking this process: its HTTP clients keep writing meanwhile. */
function berthAsync(cwd: string, args: string[]): Promise<ReturnType<typeof berth>> {
  const child = spawn(process.execPath, [berthBin, ...args], { cwd, env: cleanEnv({}) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() })),
  );
}

/** Four clients POST books until `stop()`; `answered` holds every id answered 201, in order. */
function keepWriting(url: string) {
  const answered: string[] = [];
  let writing = true;
  const writer = async (n: number) => {
    for (let i = 0; writing; i++) {
      const response = await fetch(`${url}/books`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `Book ${n}-${i}`, author: 'Writer' }),
      });
      if (response.status === 201) answered.push(((await response.json()) as { id: string }).id);
      else expect(response.status).toBe(201);
    }
  };
  const writers = [1, 2, 3, 4].map(writer);
  return {
    answered,
    stop: async () => {
      writing = false;
      await Promise.all(writers);
    },
  };
}

/**
 * `berth backup FILE` while four clients write: after `settle` ms of writes,
 * the ids answered 201 before the backup began, and how many were answered
 * while it ran.
 */
async function backupDuringWrites(server: { url: string; cwd: string }, file: string, settle: number) {
  const writes = keepWriting(server.url);
  await new Promise((done) => setTimeout(done, settle));
  const before = [...writes.answered];
  const made = await berthAsync(server.cwd, ['backup', file]);
  const during = writes.answered.length - before.length;
  await writes.stop();
  return { made, before, during };
}

async function start(cwd = tempDir(), env: Record<string, string> = {}, args: string[] = []) {
  const server = await startBinary(berthBin, {
    cwd,
    env: { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release', ...env },
    args,
  });
  onTestFinished(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await server.exited;
  });
  return Object.assign(server, { cwd });
}

/** The ids of the books in an SQLite file. */
const bookIds = (file: string): Set<string> => {
  const db = new Database(file, { readonly: true });
  try {
    return new Set((db.prepare('SELECT id FROM books').all() as Array<{ id: string }>).map((row) => row.id));
  } finally {
    db.close();
  }
};

/** Writes one book through the API and answers its id. */
const writeBook = async (server: Awaited<ReturnType<typeof start>>, title: string): Promise<string> => {
  const response = await fetch(`${server.url}/books`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ title, author: 'Kept' }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
};

const stop = async (server: Awaited<ReturnType<typeof start>>) => {
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
};

describe('backups and restore (the real binary)', () => {
  it('a backup taken during writes holds every write answered 201 before it started; restored into a fresh directory, they are all there', async () => {
    const server = await start();
    const backup = join(tempDir(), 'during.sqlite');
    const { made, before, during } = await backupDuringWrites(server, backup, 1000);
    expect(made).toMatchObject({ code: 0 });
    expect(made.stdout).toMatch(
      new RegExp(`^backed up .*/data/berth\\.sqlite to ${backup} \\(\\d+ bytes\\)$`),
    );
    expect(before.length).toBeGreaterThan(20);
    expect(during).toBeGreaterThan(0); // writes went on during the backup

    const fresh = tempDir();
    expect(berth(fresh, ['restore', backup])).toMatchObject({ code: 0 });
    const restored = await start(fresh);
    const { total } = (await (
      await fetch(`${restored.url}/books?author=Writer&limit=1&total=exact`)
    ).json()) as {
      total: number;
    };
    expect(total).toBeGreaterThanOrEqual(before.length);
    await stop(restored);
    const ids = bookIds(join(fresh, 'data', 'berth.sqlite'));
    expect(before.filter((id) => !ids.has(id))).toEqual([]);
  });

  it('a large database written to all along is still backed up (a copy SQLite restarts finishes in one read)', async () => {
    const first = await start();
    await stop(first);
    const db = new Database(join(first.cwd, 'data', 'berth.sqlite'));
    db.exec('CREATE TABLE ballast (bytes BLOB)');
    const insert = db.prepare('INSERT INTO ballast VALUES (?)');
    for (let i = 0; i < 24; i++) insert.run(Buffer.alloc(1024 * 1024, i));
    db.close();
    const server = await start(first.cwd);
    const backup = join(tempDir(), 'large.sqlite');
    const { made, before, during } = await backupDuringWrites(server, backup, 500);
    expect(made.code).toBe(0);
    expect(made.stderr).toMatch(/backing up: 100 % \((\d+) of \1 pages\)$/);
    expect(during).toBeGreaterThan(0);
    const ids = bookIds(backup);
    expect(before.filter((id) => !ids.has(id))).toEqual([]);
  }, 60_000);

  it('restore refuses while a server runs, and anything but a Berth database; the database it replaces is kept aside', async () => {
    const server = await start();
    const backup = join(tempDir(), 'one.sqlite');
    expect(berth(server.cwd, ['backup', backup]).code).toBe(0);
    expect(berth(server.cwd, ['backup', backup])).toMatchObject({
      code: 1,
      stderr: `berth: ${backup} already exists, so nothing was written: choose another name or move it away`,
    });
    const refused = berth(server.cwd, ['restore', backup]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `berth: a server (pid ${server.child.pid}, http://localhost:${server.port}) is using ${join(server.cwd, 'data')}, so nothing was changed: stop it first (\`berth service stop\` for a service, or \`kill ${server.child.pid}\`), then restore`,
    );
    // A book written after the backup: the replaced database keeps it.
    const late = (await (
      await fetch(`${server.url}/books`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'After the backup', author: 'Late' }),
      })
    ).json()) as { id: string };
    await stop(server);

    const text = join(server.cwd, 'notes.txt');
    writeFileSync(text, 'not a database at all\n');
    expect(berth(server.cwd, ['restore', text])).toMatchObject({
      code: 1,
      stderr: `berth: ${text} is not an SQLite database (file is not a database), so nothing was changed: give a file made by \`backup\``,
    });
    const foreign = join(server.cwd, 'foreign.sqlite');
    new Database(foreign).exec('CREATE TABLE things (id TEXT)').close();
    expect(berth(server.cwd, ['restore', foreign]).stderr).toBe(
      `berth: ${foreign} is an SQLite database, but not one of Berth’s (it has no berth_migrations table), so nothing was changed: give a file made by \`backup\``,
    );
    expect(berth(server.cwd, ['restore', join(server.cwd, 'missing.sqlite')])).toMatchObject({ code: 1 });
    const database = join(server.cwd, 'data', 'berth.sqlite');
    expect(bookIds(database).has(late.id)).toBe(true); // nothing changed by the refusals

    const restored = berth(server.cwd, ['restore', backup]);
    expect(restored).toMatchObject({
      code: 0,
      stdout: `restored ${backup} into ${database}; the database before it is kept as ${database}.before-restore`,
    });
    expect(bookIds(database).has(late.id)).toBe(false);
    expect(bookIds(`${database}.before-restore`).has(late.id)).toBe(true);
    // A second restore keeps the first one aside too.
    expect(berth(server.cwd, ['restore', backup]).stdout).toMatch(
      /kept as .*berth\.sqlite\.before-restore-\d{4}-/,
    );
    expect(existsSync(`${database}.before-restore`)).toBe(true);
  });

  it('restore refuses a backup holding triggers or views Berth did not make, naming them, and changes nothing', async () => {
    const server = await start();
    const backup = join(tempDir(), 'tampered.sqlite');
    expect(berth(server.cwd, ['backup', backup]).code).toBe(0);
    const kept = await writeBook(server, 'Written after the backup');
    await stop(server);
    // What the review found in a backup: a trigger that makes every new sign-up an admin.
    const tampered = new Database(backup);
    tampered.exec(
      `CREATE TRIGGER promote AFTER INSERT ON users BEGIN UPDATE users SET role = 'admin' WHERE id = NEW.id; END`,
    );
    tampered.exec('CREATE VIEW everyone AS SELECT email FROM users');
    // One named as Berth names its own (a text index's), but doing something else, is refused as well.
    tampered.exec('DROP TRIGGER "books__search_delete"');
    tampered.exec(
      `CREATE TRIGGER "books__search_delete" AFTER DELETE ON books BEGIN UPDATE users SET role = 'admin'; END`,
    );
    tampered.close();

    const refused = berth(server.cwd, ['restore', backup]);
    expect(refused).toMatchObject({
      code: 1,
      stderr: `berth: ${backup} holds trigger "books__search_delete" on books, trigger "promote" on users, view "everyone", which Berth did not make, so nothing was changed: they would run inside the server once restored. If the rest of the backup is yours, remove them from a copy (sqlite3 COPY 'DROP TRIGGER "books__search_delete"; DROP TRIGGER "promote"; DROP VIEW "everyone";') and restore that`,
    });
    const database = join(server.cwd, 'data', 'berth.sqlite');
    expect(bookIds(database).has(kept)).toBe(true);
    expect(existsSync(`${database}.before-restore`)).toBe(false);

    // Removed as the message says, the same backup restores.
    const cleaned = new Database(backup);
    cleaned.exec('DROP TRIGGER "books__search_delete"; DROP TRIGGER "promote"; DROP VIEW "everyone";');
    cleaned.close();
    expect(berth(server.cwd, ['restore', backup]).code).toBe(0);
    expect(bookIds(database).has(kept)).toBe(false);
  });

  it('the admin API lists, makes and downloads backups, for the admin token only', async () => {
    const server = await start();
    expect((await fetch(`${server.url}/admin/backups`)).status).toBe(401);
    const made = await fetch(`${server.url}/admin/backups`, { method: 'POST', headers: auth });
    expect(made.status).toBe(201);
    const entry = (await made.json()) as { name: string; bytes: number; scheduled: boolean };
    expect(entry.name).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.sqlite$/);
    expect(entry.scheduled).toBe(false);
    const list = (await (await fetch(`${server.url}/admin/backups`, { headers: auth })).json()) as {
      backups: Array<{ name: string }>;
      schedule: { every: string | null };
      lastFailure: unknown;
    };
    expect(list.backups.map((backup) => backup.name)).toEqual([entry.name]);
    expect(list.schedule.every).toBeNull();
    expect(list.lastFailure).toBeNull();

    const download = await fetch(`${server.url}/admin/backups/${entry.name}`, { headers: auth });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${entry.name}"`);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(entry.bytes);
    expect(bytes.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    const copy = join(tempDir(), 'downloaded.sqlite');
    writeFileSync(copy, bytes);
    expect(bookIds(copy).size).toBe(7); // the seeded books

    for (const name of ['nothing.sqlite', '..%2Fberth.sqlite', '2026-01-01T00-00-00-000Z.sqlite']) {
      expect((await fetch(`${server.url}/admin/backups/${name}`, { headers: auth })).status).toBe(404);
    }
    expect((await fetch(`${server.url}/admin/backups/${entry.name}`)).status).toBe(401);
  });

  it('scheduled backups keep the newest ones; a failed one is logged and shown by the admin API', async () => {
    const server = await start(tempDir(), { BERTH_BACKUP_INTERVAL: '1s', BERTH_BACKUP_KEEP: '2' });
    const dir = join(server.cwd, 'data', 'backups');
    await expect
      .poll(
        () => (existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith('auto-')).length : 0),
        {
          timeout: 10_000,
        },
      )
      .toBe(2);
    await new Promise((done) => setTimeout(done, 2500));
    const kept = readdirSync(dir).filter((name) => name.startsWith('auto-'));
    expect(kept).toHaveLength(2); // older ones pruned
    expect(server.stdout()).toMatch(/"msg":"backup removed: auto-/);
    await stop(server);

    // A file where the backups directory should be: every scheduled backup fails.
    const failing = tempDir();
    mkdirSync(join(failing, 'data'), { recursive: true });
    writeFileSync(join(failing, 'data', 'backups'), 'in the way\n');
    const broken = await start(failing, { BERTH_BACKUP_INTERVAL: '1s' });
    await expect
      .poll(
        async () =>
          (
            (await (await fetch(`${broken.url}/admin/backups`, { headers: auth })).json()) as {
              lastFailure: { message: string } | null;
            }
          ).lastFailure?.message,
        { timeout: 10_000 },
      )
      .toMatch(/EEXIST|ENOTDIR/);
    await expect.poll(() => broken.output()).toMatch(/"level":50,.*"msg":"scheduled backup failed: /);
    expect(readFileSync(join(failing, 'data', 'backups'), 'utf8')).toBe('in the way\n');
  });

  it('nothing is lost: a database whose latest writes are only in its -wal goes aside with it, and restoring the aside file brings them back', async () => {
    const server = await start();
    const backup = join(tempDir(), 'early.sqlite');
    expect(berth(server.cwd, ['backup', backup]).code).toBe(0);
    expect(statSync(backup).mode & 0o777).toBe(0o600); // a backup holds what the database holds
    const late = await writeBook(server, 'Only in the WAL');
    // Killed: no checkpoint, so the late book is in berth.sqlite-wal only.
    server.child.kill('SIGKILL');
    await server.exited;
    const database = join(server.cwd, 'data', 'berth.sqlite');
    expect(existsSync(`${database}-wal`)).toBe(true);

    const restored = berth(server.cwd, ['restore', backup]);
    expect(restored.stdout).toBe(
      `restored ${backup} into ${database}; the database before it is kept as ${database}.before-restore`,
    );
    expect(existsSync(`${database}.before-restore-wal`)).toBe(true);
    expect(bookIds(database).has(late)).toBe(false);
    expect(statSync(database).mode & 0o777).toBe(0o600);

    // Undo: the aside file, read with its -wal, is restored whole.
    const undone = berth(server.cwd, ['restore', `${database}.before-restore`]);
    expect(undone.code).toBe(0);
    expect(undone.stdout).toMatch(/kept as .*berth\.sqlite\.before-restore-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    expect(bookIds(database).has(late)).toBe(true);
    const again = await start(server.cwd);
    expect((await fetch(`${again.url}/books/${late}`)).status).toBe(200);
  });

  it('with --workers, the schedule is not used: each worker says so, in the log and in GET /admin/backups, and makes backups on demand', async () => {
    const server = await start(tempDir(), { BERTH_BACKUP_INTERVAL: '1s' }, ['--workers', '2']);
    const list = (await (await fetch(`${server.url}/admin/backups`, { headers: auth })).json()) as {
      schedule: { every: string | null; note?: string };
    };
    expect(list.schedule.every).toBeNull();
    expect(list.schedule.note).toMatch(/^scheduled backups run in a single process only, .*berth backup/);
    const made = await fetch(`${server.url}/admin/backups`, { method: 'POST', headers: auth });
    expect(made.status).toBe(201);
    await new Promise((done) => setTimeout(done, 2500));
    const dir = join(server.cwd, 'data', 'backups');
    expect(readdirSync(dir).filter((name) => name.startsWith('auto-'))).toEqual([]);
    expect(server.output()).toMatch(/"level":40,.*"msg":"scheduled backups run in a single process only/);
  });

  it('a runtime without backups (the browser) answers 404 with what to use instead', async () => {
    const { request } = await instantiate(createApp({ name: 'no-backups', modules: [] }));
    const listed = await request('/admin/backups', { admin: true });
    expect(listed.status).toBe(404);
    expect(await listed.json()).toMatchObject({
      detail: 'this runtime makes no backups',
      hint: 'Backups are made by the Node server (`berth start`, `berth backup`), not in the page.',
    });
    expect((await request('/admin/backups', { method: 'POST', admin: true })).status).toBe(404);
    expect((await request('/admin/backups', { method: 'POST' })).status).toBe(401);
  });

  it('with PostgreSQL: pg_dump when it is on the machine, else what to run', async () => {
    const postgres = await privatePostgres();
    const cwd = tempDir();
    const dump = join(cwd, 'shop.dump');
    const made = berth(cwd, ['backup', dump], { DATABASE_URL: postgres.url });
    expect(made).toMatchObject({ code: 0 });
    expect(made.stdout).toMatch(
      /^backed up the PostgreSQL database \(pg_dump, custom format; restore with pg_restore\) to /,
    );
    expect(readFileSync(dump).subarray(0, 5).toString()).toBe('PGDMP');

    const missing = berth(cwd, ['backup', join(cwd, 'other.dump')], {
      DATABASE_URL: postgres.url,
      PATH: '/nonexistent',
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^berth: pg_dump is not on this machine \(PATH\): install PostgreSQL’s client tools/,
    );
    expect(existsSync(join(cwd, 'other.dump'))).toBe(false);
    expect(berth(cwd, ['restore', dump], { DATABASE_URL: postgres.url }).stderr).toMatch(
      /pg_restore --clean/,
    );
  });

  it('with PostgreSQL, pg_dump gets the password in its environment, never in its arguments (which every user sees in ps)', async () => {
    const password = 'never-in-the-process-table-42';
    const schema = await freshSchema();
    const url = `${postgresUrl.replace('://postgres@', `://postgres:${password}@`)}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    expect(url).toContain(password);
    // A pg_dump first on PATH that writes down what it was given, then runs the real one.
    const realPgDump = spawnSync('sh', ['-c', 'command -v pg_dump'], { encoding: 'utf8' }).stdout.trim();
    expect(realPgDump).not.toBe('');
    const bin = tempDir();
    const record = join(bin, 'pg_dump-was-given');
    writeFileSync(
      join(bin, 'pg_dump'),
      [
        '#!/bin/sh',
        `for word in "$@"; do printf '%s\\n' "$word"; done > '${record}.args'`,
        `printf '%s' "$PGPASSWORD" > '${record}.password'`,
        `exec '${realPgDump}' "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(join(bin, 'pg_dump'), 0o755);
    const env = { DATABASE_URL: url, PATH: `${bin}:${process.env.PATH}` };
    const given = () => ({
      args: readFileSync(`${record}.args`, 'utf8'),
      password: readFileSync(`${record}.password`, 'utf8'),
    });

    const cwd = tempDir();
    const dump = join(cwd, 'shop.dump');
    expect(berth(cwd, ['backup', dump], env)).toMatchObject({ code: 0 });
    expect(readFileSync(dump).subarray(0, 5).toString()).toBe('PGDMP');
    expect(given().args).not.toContain(password);
    expect(given().args).toContain(`--dbname=${url.replace(`:${password}@`, '@')}\n`);
    expect(given().password).toBe(password);

    // The server's POST /admin/backups runs it the same way.
    rmSync(`${record}.args`);
    const server = await start(cwd, env);
    const made = await fetch(`${server.url}/admin/backups`, { method: 'POST', headers: auth });
    expect(made.status).toBe(201);
    expect(((await made.json()) as { name: string }).name).toMatch(/\.dump$/);
    expect(given().args).not.toContain(password);
    expect(given().password).toBe(password);
  });

  it('a project’s binary has the same commands; a large database prints its progress on stderr, the result on stdout', async () => {
    const cwd = tempDir();
    expect(berth(cwd, ['backup'], {}, bookshopBin)).toMatchObject({
      code: 1,
      stderr: `bookshop: there is no database at ${join(cwd, 'data', 'berth.sqlite')} yet: \`bookshop start\` creates it (or run this where the project’s data directory is)`,
    });
    const server = await startBinary(bookshopBin, {
      cwd,
      env: { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release' },
    });
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    const db = new Database(join(cwd, 'data', 'berth.sqlite'));
    db.exec('CREATE TABLE ballast (bytes BLOB)');
    db.prepare('INSERT INTO ballast VALUES (?)').run(Buffer.alloc(8 * 1024 * 1024, 7));
    db.close();

    const made = berth(cwd, ['backup'], {}, bookshopBin);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(
      /^backed up .*\/data\/berth\.sqlite to .*\/data\/backups\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.sqlite \(\d+ bytes\)$/,
    );
    const lines = made.stderr.split('\n');
    expect(lines[0]).toMatch(/^backing up: 0 % \(0 of \d+ pages\)$/);
    expect(lines.at(-1)).toMatch(/^backing up: 100 % \((\d+) of \1 pages\)$/);
    const [name] = readdirSync(join(cwd, 'data', 'backups'));
    expect(statSync(join(cwd, 'data', 'backups', name!)).size).toBeGreaterThan(8 * 1024 * 1024);
  });

  it('a large database reports its progress every 10 %', () => {
    const lines: string[] = [];
    const report = progressLines((line) => lines.push(line), 100);
    for (let copied = 0; copied <= 1000; copied += 50) report(copied, 1000);
    expect(lines[0]).toBe('backing up: 0 % (0 of 1000 pages)');
    expect(lines.at(-1)).toBe('backing up: 100 % (1000 of 1000 pages)');
    expect(lines).toHaveLength(11);
    const small: string[] = [];
    progressLines((line) => small.push(line), 100)(50, 50);
    expect(small).toEqual([]);
  });
});
