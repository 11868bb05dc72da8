import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingsReference } from '../src/node/settings/setting-table.js';
import { resolveSettings } from '../src/node/settings/settings.js';
import { tempDir } from './helpers/processes.js';

function settingsIn(
  files: { env?: string; config?: object | string },
  processEnv: Record<string, string> = {},
  flags = {},
) {
  const cwd = tempDir();
  if (files.env !== undefined) writeFileSync(join(cwd, '.env'), files.env);
  if (files.config !== undefined) {
    const text = typeof files.config === 'string' ? files.config : JSON.stringify(files.config);
    writeFileSync(join(cwd, 'berth.config.json'), text);
  }
  return { cwd, settings: () => resolveSettings({ cwd, flags, processEnv }) };
}

describe('port precedence', () => {
  it('defaults to 4500', () => {
    expect(settingsIn({}).settings().port).toEqual({ value: 4500, source: 'the default' });
  });

  it('the config file overrides the default', () => {
    const { settings, cwd } = settingsIn({ config: { port: 4601 } });
    expect(settings().port).toEqual({
      value: 4601,
      source: `"port" in ${join(cwd, 'berth.config.json')}`,
    });
  });

  it('.env overrides the config file, and the real environment overrides .env', () => {
    expect(settingsIn({ config: { port: 4601 }, env: 'PORT=4602\n' }).settings().port).toEqual({
      value: 4602,
      source: 'PORT in .env',
    });
    expect(
      settingsIn({ config: { port: 4601 }, env: 'PORT=4602\n' }, { PORT: '4603' }).settings().port,
    ).toEqual({ value: 4603, source: 'the environment variable PORT' });
  });

  it('the --port flag overrides everything', () => {
    const { settings } = settingsIn({ config: { port: 4601 } }, { PORT: '4603' }, { port: '4604' });
    expect(settings().port).toEqual({ value: 4604, source: 'the --port flag' });
  });

  it('a bad value names where it came from', () => {
    expect(() => settingsIn({}, { PORT: 'abc' }).settings()).toThrow(
      'invalid port "abc" from the environment variable PORT: use a whole number from 1 to 65535',
    );
    expect(() => settingsIn({ config: { port: 70000 } }).settings()).toThrow(
      /invalid port 70000 from "port" in .*berth\.config\.json/,
    );
    expect(() => settingsIn({ env: 'PORT=-1' }).settings()).toThrow(/from PORT in \.env/);
  });
});

describe('config file', () => {
  it('names the file when its JSON is broken or a key is unknown', () => {
    expect(() => settingsIn({ config: '{"port": 1,' }).settings()).toThrow(
      /berth\.config\.json is not valid JSON/,
    );
    expect(() => settingsIn({ config: { prot: 1 } }).settings()).toThrow(/berth\.config\.json: .*prot/);
  });

  it('resolves dataDir against the config file and BERTH_DATA_DIR against the working directory', () => {
    const { cwd, settings } = settingsIn({ config: { dataDir: 'store' } });
    expect(settings().dataDir.value).toBe(join(cwd, 'store'));
    const fromEnv = settingsIn({ config: { dataDir: 'store' } }, { BERTH_DATA_DIR: 'elsewhere' });
    expect(fromEnv.settings().dataDir.value).toBe(join(fromEnv.cwd, 'elsewhere'));
  });
});

describe('mode', () => {
  it('is debug by default, release with BERTH_MODE or NODE_ENV=production', () => {
    expect(settingsIn({}).settings().mode.value).toBe('debug');
    expect(settingsIn({}, { NODE_ENV: 'production' }).settings().mode.value).toBe('release');
    expect(settingsIn({ env: 'BERTH_MODE=release' }).settings().mode.value).toBe('release');
    expect(settingsIn({}, { BERTH_MODE: 'debug', NODE_ENV: 'production' }).settings().mode.value).toBe(
      'debug',
    );
  });

  it('rejects an unknown mode with the fix', () => {
    expect(() => settingsIn({}, { BERTH_MODE: 'prod' }).settings()).toThrow(
      'use BERTH_MODE=debug or BERTH_MODE=release',
    );
  });
});

describe('the setting table', () => {
  it('derives defaults from other settings, and names where each value came from', () => {
    const { cwd, settings } = settingsIn({ config: { bodyLimit: 1000, realtimeMessageRate: 30 } });
    const resolved = settings();
    expect(resolved.batchMaxResponseBytes).toEqual({
      value: 8000,
      source: 'the default (8 × the body limit)',
    });
    expect(resolved.realtimeMessageRate).toEqual({
      value: 30,
      source: `"realtimeMessageRate" in ${join(cwd, 'berth.config.json')}`,
    });
    expect(resolved.dataDir).toEqual({ value: join(cwd, 'data'), source: 'the default' });
    expect(() => settingsIn({}, { BERTH_BATCH_MAX_REQUESTS: '0' }).settings()).toThrow(
      'invalid batch request limit "0" from the environment variable BERTH_BATCH_MAX_REQUESTS: use a whole number of 1 or more',
    );
  });

  it('the configuration page’s settings table is the one the table generates (npm run docs:settings)', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'docs', 'configuration.md'), 'utf8');
    const block = /<!-- settings:start -->\n([\s\S]*?)\n<!-- settings:end -->/.exec(readme)?.[1];
    expect(block).toBe(settingsReference());
  });
});
