import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { progressLines } from '../src/node/backups.js';
import { berthBin, startBinary, tempDir } from './helpers/processes.js';
import { privatePostgres } from './helpers/private-services.js';

const token = 'backups-admin-token-0123456789';
const auth = { authorization: `Bearer ${token}` };

/** Runs a command of the real binary to its end (no PORT, BERTH_* or DATABASE_URL from this process). */
function berth(cwd: string, args: string[], env: Record<string, string> = {}) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(PORT|BERTH_|DATABASE_URL|REDIS_URL)/.test(key)),
  ) as Record<string, string>;
  const result = spawnSync(process.execPath, [berthBin, ...args], {
    cwd,
    env: { ...clean, ...env },
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

async function start(cwd = tempDir(), env: Record<string, string> = {}) {
  const server = await startBinary(berthBin, {
    cwd,
    env: { PORT: '0', BERTH_ADMIN_TOKEN: token, BERTH_MODE: 'release', ...env },
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

const stop = async (server: Awaited<ReturnType<typeof start>>) => {
  server.child.kill('SIGTERM');
  expect((await server.exited).code).toBe(0);
};

describe('backups and restore (the real binary)', () => {
  it('a backup taken during writes holds every write answered 201 before it started; restored into a fresh directory, they are all there', async () => {
    const server = await start();
    const answered: string[] = [];
    let writing = true;
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        const response = await fetch(`${server.url}/books`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `Book ${n}-${i}`, author: 'Writer' }),
        });
        if (response.status === 201) answered.push(((await response.json()) as { id: string }).id);
        else expect(response.status).toBe(201);
      }
    };
    const writers = [1, 2, 3, 4].map(writer);
    await new Promise((done) => setTimeout(done, 1000));
    const before = [...answered];
    const backup = join(tempDir(), 'during.sqlite');
    const made = berth(server.cwd, ['backup', backup]);
    writing = false;
    await Promise.all(writers);
    expect(made).toMatchObject({ code: 0 });
    expect(made.stdout).toMatch(
      new RegExp(`^backed up .*/data/berth\\.sqlite to ${backup} \\(\\d+ bytes\\)$`),
    );
    expect(before.length).toBeGreaterThan(20);
    expect(answered.length).toBeGreaterThan(before.length); // writes went on during the backup

    const fresh = tempDir();
    expect(berth(fresh, ['restore', backup])).toMatchObject({ code: 0 });
    const restored = await start(fresh);
    const { total } = (await (await fetch(`${restored.url}/books?author=Writer&limit=1`)).json()) as {
      total: number;
    };
    expect(total).toBeGreaterThanOrEqual(before.length);
    await stop(restored);
    const ids = bookIds(join(fresh, 'data', 'berth.sqlite'));
    expect(before.filter((id) => !ids.has(id))).toEqual([]);
  });

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
