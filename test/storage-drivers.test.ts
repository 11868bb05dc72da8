import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp, type Logger, type Storage } from '../src/core/internal.js';
import { runCli } from '../src/cli/run-cli.js';
import { serverBackups } from '../src/node/data/backups.js';
import { openStorage } from '../src/node/data/open-storage.js';
import { SettingError } from '../src/node/settings/setting-error.js';
import { resolveSettings } from '../src/node/settings/settings.js';
import {
  chosenStorage,
  registerStorageDriver,
  registeredSchemes,
  type StorageDriverEntry,
} from '../src/node/data/storage-drivers/registry.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { tempDir } from './helpers/processes.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** The settings of a project in `cwd`, with these variables (and none of this process's). */
const settingsWith = (cwd: string, processEnv: Record<string, string>) =>
  resolveSettings({ cwd, flags: {}, processEnv });

/** A driver that keeps what it was asked: registered once, for every test of this file. */
const calls: Array<{ call: string; url: string; file?: string }> = [];
const fake: StorageDriverEntry = {
  name: 'fake',
  schemes: ['fake:'],
  description: 'a driver of the tests, SQLite in memory underneath',
  example: 'fake://anything',
  embedded: false,
  open(url) {
    calls.push({ call: 'open', url });
    return { ...openSqliteStorage(':memory:'), driver: 'fake', location: url };
  },
  backupExtension: 'fakedump',
  backupSource: (url) => `the fake database at ${url}`,
  async backup(url, file) {
    calls.push({ call: 'backup', url, file });
    writeFileSync(file, `a copy of ${url}`);
  },
  async restore(url, file, { lock }) {
    const held = lock();
    held.release();
    calls.push({ call: 'restore', url, file });
    return `restored ${file} into ${url}`;
  },
};
registerStorageDriver(fake);

describe('storage drivers by URL scheme', () => {
  beforeEach(() => {
    calls.length = 0;
  });

  it('a URL whose scheme no driver takes is refused, naming where it came from and the schemes there are (never the URL)', () => {
    const cwd = tempDir();
    const refused = () =>
      settingsWith(cwd, { DATABASE_URL: 'mysql://root:secret-password@db/shop' }).databaseUrl;
    expect(refused).toThrow(SettingError);
    expect(refused).toThrow(
      'DATABASE_URL from the environment variable DATABASE_URL starts with mysql:, which no storage driver takes: use sqlite: (sqlite:path/to/file.sqlite), postgres: or postgresql: (postgres://user:password@host:5432/database), fake: (fake://anything), or unset it for SQLite in the data directory',
    );
    expect(refused).not.toThrow(/secret-password/);
    expect(() => settingsWith(cwd, { DATABASE_URL: '/var/lib/shop.sqlite' }).databaseUrl).toThrow(
      /^DATABASE_URL from the environment variable DATABASE_URL has no scheme: use sqlite: /,
    );
    writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ databaseUrl: 'redis://cache' }));
    expect(() => settingsWith(cwd, {}).databaseUrl).toThrow(
      `DATABASE_URL from "databaseUrl" in ${join(cwd, 'berth.config.json')} starts with redis:, which no storage driver takes`,
    );
    expect(registeredSchemes()).toEqual(['sqlite:', 'postgres:', 'postgresql:', 'fake:']);
  });

  it('a scheme is one driver’s: registering it again for another is refused', () => {
    expect(() => registerStorageDriver({ ...fake, name: 'other' })).toThrow(
      'the scheme fake: is the fake driver’s already',
    );
  });

  it('a PostgreSQL URL must still name its server', () => {
    expect(() => settingsWith(tempDir(), { DATABASE_URL: 'postgres:shop' }).databaseUrl).toThrow(
      'DATABASE_URL from the environment variable DATABASE_URL is not a PostgreSQL URL: use postgres://user:password@host:5432/database (or unset it for the embedded SQLite)',
    );
  });

  it('a sqlite: URL opens that file: an absolute path, or one relative to the working directory', async () => {
    const cwd = tempDir();
    const relative = settingsWith(cwd, { DATABASE_URL: 'sqlite:db/shop.sqlite' });
    expect(relative.databaseUrl.value).toBe(`sqlite:${join(cwd, 'db', 'shop.sqlite')}`);
    const driver = openStorage(relative, quiet);
    expect(driver).toMatchObject({ driver: 'sqlite', location: join(cwd, 'db', 'shop.sqlite') });
    await driver.close();
    expect(existsSync(join(cwd, 'db', 'shop.sqlite'))).toBe(true);
    expect(existsSync(join(cwd, 'data', 'berth.sqlite'))).toBe(false);

    const elsewhere = join(tempDir(), 'other.sqlite');
    const absolute = settingsWith(cwd, { DATABASE_URL: `sqlite:${elsewhere}` });
    const other = openStorage(absolute, quiet);
    expect(other.location).toBe(elsewhere);
    await other.close();
    expect(existsSync(elsewhere)).toBe(true);

    expect(() => settingsWith(cwd, { DATABASE_URL: 'sqlite://db/shop.sqlite' }).databaseUrl).toThrow(
      'DATABASE_URL from the environment variable DATABASE_URL starts with sqlite://: write sqlite:/absolute/path.sqlite, or sqlite:relative/path.sqlite (from the working directory)',
    );
  });

  it('without DATABASE_URL the database is berth.sqlite in the data directory', async () => {
    const cwd = tempDir();
    const settings = settingsWith(cwd, {});
    expect(chosenStorage(settings)).toMatchObject({
      url: `sqlite:${join(cwd, 'data', 'berth.sqlite')}`,
      driver: { name: 'sqlite' },
    });
    const driver = openStorage(settings, quiet);
    expect(driver.location).toBe(join(cwd, 'data', 'berth.sqlite'));
    await driver.close();
  });

  it('a registered scheme picks its driver: the setting takes it, start opens it, and scheduled backups are its own', async () => {
    const cwd = tempDir();
    const settings = settingsWith(cwd, { DATABASE_URL: 'fake://shop' });
    expect(settings.databaseUrl.value).toBe('fake://shop');
    const driver = openStorage(settings, quiet);
    expect(driver.driver).toBe('fake');
    expect(calls).toEqual([{ call: 'open', url: 'fake://shop' }]);
    await driver.close();

    const backups = serverBackups({
      storage: {} as Storage,
      dataDir: settings.dataDir.value,
      databaseUrl: settings.databaseUrl.value,
      interval: 0,
      keep: 1,
      logger: quiet,
    });
    const made = await backups.make();
    expect(made.name).toMatch(/^\d{4}-.*Z\.fakedump$/);
    expect(calls[1]).toMatchObject({ call: 'backup', url: 'fake://shop' });
    expect((await backups.list()).backups.map((entry) => entry.name)).toEqual([made.name]);
    expect(readFileSync(join(settings.dataDir.value, 'backups', made.name), 'utf8')).toBe(
      'a copy of fake://shop',
    );
    await backups.stop();
  });

  describe('the backup and restore commands ask the driver', () => {
    let stdout = '';
    let stderr = '';
    /** The variables a command reads, as this process had them. */
    const ours = (key: string): boolean => /^(BERTH_|DATABASE_URL)/.test(key);
    const saved = Object.fromEntries(Object.entries(process.env).filter(([key]) => ours(key)));
    beforeEach(() => {
      stdout = stderr = '';
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
      for (const key of Object.keys(process.env)) if (ours(key)) delete process.env[key];
    });
    afterEach(() => {
      vi.restoreAllMocks();
      for (const key of Object.keys(process.env)) if (ours(key)) delete process.env[key];
      Object.assign(process.env, saved);
      process.exitCode = undefined;
    });
    const shop = createApp({ name: 'shop', modules: [] });
    const run = (...args: string[]) => runCli(shop, { argv: ['node', 'shop', ...args] });

    it('backup writes what the driver copies, under its extension; restore hands it the backup and the lock', async () => {
      const dir = tempDir();
      process.env.BERTH_DATA_DIR = join(dir, 'data');
      process.env.DATABASE_URL = 'fake://shop';

      await run('backup');
      expect(stderr).toBe('');
      expect(stdout).toMatch(
        new RegExp(
          `^backed up the fake database at fake://shop to ${join(dir, 'data', 'backups')}/.*Z\\.fakedump \\(21 bytes\\)\\n$`,
        ),
      );
      expect(calls).toMatchObject([{ call: 'backup', url: 'fake://shop' }]);

      stdout = '';
      await run('backup', join(dir, 'mine.fakedump'));
      expect(readFileSync(join(dir, 'mine.fakedump'), 'utf8')).toBe('a copy of fake://shop');

      stdout = '';
      await run('restore', 'some.fakedump');
      expect(stdout).toBe('restored some.fakedump into fake://shop\n');
      expect(calls.at(-1)).toEqual({ call: 'restore', url: 'fake://shop', file: 'some.fakedump' });
      expect(process.exitCode).toBeUndefined();
    });

    it('a driver’s refusal is one line and exit 1', async () => {
      const dir = tempDir();
      process.env.BERTH_DATA_DIR = join(dir, 'data');
      process.env.DATABASE_URL = 'postgres://nobody@127.0.0.1:1/none';
      await run('restore', 'shop.dump');
      expect(stderr).toBe(
        'shop: restore puts back the embedded SQLite database, but this project uses PostgreSQL (the environment variable DATABASE_URL): restore a dump with pg_restore --clean --if-exists --dbname="$DATABASE_URL" shop.dump\n',
      );
      expect(process.exitCode).toBe(1);
    });
  });
});
