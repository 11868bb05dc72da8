import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from '../src/storage/sqlite-driver.js';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { adminToken, call, signUp, startAccountsServer } from './helpers/accounts.js';
import { freshSchema, postgresUrl } from './helpers/postgres.js';
import { berthBin, repoRoot, run, startBinary, tempDir } from './helpers/processes.js';

type Sessions = { items: Array<{ id: string; user: string }>; total: number };

const withSchema = (schema: string) =>
  `${postgresUrl}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;

const logIn = async (url: string, email: string, password: string): Promise<string> => {
  const answer = await call<{ token: string }>(url, 'POST', '/auth/login', { json: { email, password } });
  expect(answer.status).toBe(200);
  return answer.body.token;
};

describe('sessions per user are capped, and expired ones are deleted on a schedule', () => {
  it('a login over sessionsPerUser ends the oldest session of that user, and only theirs', async () => {
    const server = await startAccountsServer({ env: { BERTH_SESSIONS_PER_USER: '3' } });
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const bob = await signUp(url, 'bob@example.org');
    const tokens = [ada.token];
    for (let i = 0; i < 3; i++) tokens.push(await logIn(url, ada.email, ada.password));
    // The first (the sign-up's login) ended; the three newest work.
    const statuses = [];
    for (const token of tokens) statuses.push((await call(url, 'GET', '/auth/me', { token })).status);
    expect(statuses).toEqual([401, 200, 200, 200]);
    tokens.push(await logIn(url, ada.email, ada.password));
    expect((await call(url, 'GET', '/auth/me', { token: tokens[1] })).status).toBe(401);
    const own = await call<Sessions>(url, 'GET', '/sessions', { token: tokens[4] });
    expect(own.body.total).toBe(3);
    expect(own.body.items.map((session) => session.id).sort()).toEqual(
      tokens
        .slice(2)
        .map((token) => token.split('.')[0])
        .sort(),
    );
    // Another user's sessions are not touched.
    expect((await call(url, 'GET', '/auth/me', { token: bob.token })).status).toBe(200);

    // A lower cap after a restart: the next login ends every session over it at once.
    await server.close();
    const again = await startAccountsServer({ cwd: server.cwd, env: { BERTH_SESSIONS_PER_USER: '1' } });
    const last = await logIn(again.url, ada.email, ada.password);
    const left = await call<Sessions>(again.url, 'GET', '/sessions', { token: last });
    expect(left.body.items.map((session) => session.id)).toEqual([last.split('.')[0]]);
    for (const token of tokens.slice(2))
      expect((await call(again.url, 'GET', '/auth/me', { token })).status).toBe(401);
  });

  it('expired sessions are deleted on a schedule, without a login, and the log says how many', async () => {
    const server = await startAccountsServer({ env: { BERTH_SESSION_PRUNE_SECONDS: '1' } });
    const { url } = server;
    const ada = await signUp(url, 'ada@example.org');
    const laptop = await logIn(url, ada.email, ada.password);
    const db = new Database(join(server.cwd, 'data', 'berth.sqlite'));
    db.prepare('UPDATE sessions SET expiresAt = ? WHERE id = ?').run(
      new Date(Date.now() - 1000).toISOString(),
      ada.token.split('.')[0],
    );
    db.close();
    await vi.waitFor(
      async () => {
        const all = await call<Sessions>(url, 'GET', '/sessions', { token: adminToken });
        expect(all.body.items.map((session) => session.id)).toEqual([laptop.split('.')[0]]);
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(server.logs.text).toContain('accounts: deleted 1 expired session(s)');
    expect((await call(url, 'GET', '/auth/me', { token: laptop })).status).toBe(200);
  });

  it('two instances on one PostgreSQL database both prune: each expired session is deleted once, and neither fails', async () => {
    const schema = await freshSchema();
    const env = { DATABASE_URL: withSchema(schema), BERTH_SESSION_PRUNE_SECONDS: '1' };
    const one = await startAccountsServer({ env });
    const two = await startAccountsServer({ env });
    let made = 0;
    for (const [index, server] of [one, two].entries()) {
      const user = await signUp(server.url, `user${index}@example.org`);
      for (let i = 0; i < 9; i++) await logIn(server.url, user.email, user.password);
      made += 10;
    }
    const client = new pg.Client({ connectionString: withSchema(schema) });
    await client.connect();
    const expired = await client.query('UPDATE sessions SET "expiresAt" = $1', [
      new Date(Date.now() - 1000).toISOString(),
    ]);
    expect(expired.rowCount).toBe(made);
    await vi.waitFor(
      async () => {
        const left = await client.query('SELECT count(*)::int AS n FROM sessions');
        expect(left.rows[0].n).toBe(0);
      },
      { timeout: 15_000, interval: 250 },
    );
    await client.end();
    const deletedIn = (text: string) =>
      [...text.matchAll(/accounts: deleted (\d+) expired session/g)].reduce(
        (sum, [, count]) => sum + Number(count),
        0,
      );
    expect(deletedIn(one.logs.text) + deletedIn(two.logs.text)).toBe(made);
    for (const server of [one, two])
      expect(server.logs.text).not.toContain('deleting expired sessions failed');
  });

  it('with --workers 2 on SQLite, both workers prune: each expired session is deleted once, and none fails', async () => {
    const cwd = tempDir('berth-prune-');
    const server = await startBinary(berthBin, {
      cwd,
      env: {
        PORT: '0',
        BERTH_ADMIN_TOKEN: adminToken,
        BERTH_MODE: 'release',
        BERTH_SESSION_PRUNE_SECONDS: '1',
      },
      args: ['--workers', '2'],
    });
    const url = server.url;
    // Logins at once, on connections of their own: the primary hands them to both workers.
    const users = await Promise.all(
      ['ada', 'bob', 'cy', 'di'].map((name) => signUp(url, `${name}@example.org`)),
    );
    await Promise.all(users.flatMap((user) => [1, 2, 3, 4].map(() => logIn(url, user.email, user.password))));
    const made = users.length * 5;
    const db = new Database(join(cwd, 'data', 'berth.sqlite'));
    db.pragma('busy_timeout = 5000');
    expect(
      db.prepare('UPDATE sessions SET expiresAt = ?').run(new Date(Date.now() - 1000).toISOString()).changes,
    ).toBe(made);
    // Each worker logs what it deleted (JSON lines, with its pid).
    const pruned = () =>
      server
        .stdout()
        .split('\n')
        .filter((line) => line.includes('expired session'))
        .map((line) => JSON.parse(line) as { pid: number; deleted: number });
    await vi.waitFor(() => expect(pruned().reduce((sum, line) => sum + line.deleted, 0)).toBe(made), {
      timeout: 15_000,
      interval: 250,
    });
    expect(db.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 0 });
    db.close();
    // Both workers served logins, so both have their schedule (each deleting what it finds).
    const loginsBy = new Set(
      server
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"path":"/auth/login"') && line.includes('"status":200'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid),
    );
    expect(loginsBy.size).toBe(2);
    expect(server.output()).not.toContain('deleting expired sessions failed');
  });

  it('the schedule ends when the app closes', async () => {
    const server = await startAccountsServer({ env: { BERTH_SESSION_PRUNE_SECONDS: '1' } });
    await signUp(server.url, 'ada@example.org');
    await server.close();
    // A round after the close would find the database closed, and say so in the log.
    await new Promise((done) => setTimeout(done, 2500));
    expect(server.logs.text).toContain('stopped');
    expect(server.logs.text).not.toContain('deleting expired sessions failed');
  });

  it('the schedule alone keeps no process running: a script that logs in through app.request ends by itself', async () => {
    const cwd = tempDir('berth-prune-');
    const script = join(cwd, 'log-in.mjs');
    writeFileSync(
      script,
      `import { accountsModule, createApp, usersModule } from ${JSON.stringify(join(repoRoot, 'dist', 'index.js'))};
const app = createApp({ name: 'log-in', modules: [usersModule, accountsModule] });
const post = (body) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const credentials = { email: 'ada@example.org', password: 'analytical engine' };
await app.request('/auth/signup', post(credentials));
console.log('logged in:', (await app.request('/auth/login', post(credentials))).status);
`,
    );
    const child = run(script, [], { cwd, env: { BERTH_SESSION_PRUNE_SECONDS: '1' } });
    await child.waitFor(/logged in: 200/);
    const ended = await Promise.race([
      child.exited,
      new Promise((done) => setTimeout(() => done('still running after 20 s'), 20_000)),
    ]);
    expect(ended).toEqual({ code: 0, signal: null });
  });
});
