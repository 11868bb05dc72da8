import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  createApp,
  defineModule,
  defineRoute,
  defineSettings,
  startServer,
  testAdminToken,
  z,
  type SettingEntry,
} from '../src/internal.js';
import { settingTable } from '../src/node/settings/setting-table.js';
import { tempDir } from './helpers/processes.js';

const trackerSettings = defineSettings('tracker', {
  maxTasksPerProject: { schema: z.number().int().positive(), default: 10, variable: 'TRACKER_MAX' },
  webhookSecret: {
    schema: z.string().optional(),
    default: undefined,
    variable: 'TRACKER_WEBHOOK_SECRET',
    secret: true,
  },
  greeting: { schema: z.string(), default: 'hello', restart: true },
});
const app = createApp({
  name: 'tracker',
  modules: [
    defineModule({
      name: 'tracker',
      settings: trackerSettings,
      routes: [
        defineRoute({
          method: 'GET',
          path: '/tracker/settings',
          summary: 'The tracker’s settings',
          handler: ({ services }) => ({ ...trackerSettings.of(services), webhookSecret: undefined }),
        }),
      ],
    }),
  ],
});

/** A log destination that keeps what it is written, as text. */
function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

const secretValue = 'webhook-s3cret-value-1234';
const admin = { authorization: `Bearer ${testAdminToken}` };

async function overview(url: string): Promise<SettingEntry[]> {
  const response = await fetch(`${url}/admin/overview`, { headers: admin });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { settings: SettingEntry[] };
  expect(JSON.stringify(body)).not.toContain(secretValue);
  expect(JSON.stringify(body)).not.toContain(testAdminToken);
  return body.settings;
}

describe('settings in plain sight', () => {
  it('the start log and /admin/overview list every setting, Berth’s and the modules’, with its value and source; secrets only as set', async () => {
    const cwd = tempDir();
    const config = join(cwd, 'berth.config.json');
    writeFileSync(config, JSON.stringify({ bodyLimit: 2048, tracker: { maxTasksPerProject: 3 } }));
    writeFileSync(join(cwd, '.env'), `TRACKER_WEBHOOK_SECRET=${secretValue}\n`, { mode: 0o600 });
    const log = capture();
    const server = await startServer(app, {
      cwd,
      flags: { port: '0' },
      env: { BERTH_ADMIN_TOKEN: testAdminToken },
      logDestination: log.stream,
    });
    try {
      const lines = log.text().split('\n');
      const settingLines = lines.filter((line) => / setting /.test(line));
      // Every setting of Berth's table and the module's three, once each.
      expect(settingLines).toHaveLength(Object.keys(settingTable).length + 3);
      expect(log.text()).toContain('setting port = 0 (the --port flag)');
      expect(log.text()).toContain(`setting body limit = 2048 ("bodyLimit" in ${config})`);
      expect(log.text()).toContain(
        'setting admin token = (set, not shown) (the environment variable BERTH_ADMIN_TOKEN)',
      );
      expect(log.text()).toContain(
        `setting tracker.maxTasksPerProject = 3 ("tracker.maxTasksPerProject" in ${config})`,
      );
      expect(log.text()).toContain(
        'setting tracker.webhookSecret = (set, not shown) (TRACKER_WEBHOOK_SECRET in .env)',
      );
      expect(log.text()).toContain('setting tracker.greeting = hello (the default)');
      expect(log.text()).not.toContain(secretValue);
      expect(log.text()).not.toContain(testAdminToken);

      const settings = await overview(server.url);
      expect(settings).toHaveLength(settingLines.length);
      expect(settings.find((each) => each.setting === 'tracker.maxTasksPerProject')).toEqual({
        module: 'tracker',
        setting: 'tracker.maxTasksPerProject',
        value: 3,
        secret: false,
        source: `"tracker.maxTasksPerProject" in ${config}`,
        reload: true,
      });
      expect(settings.find((each) => each.setting === 'tracker.webhookSecret')).toMatchObject({
        value: null,
        secret: true,
        source: 'TRACKER_WEBHOOK_SECRET in .env',
      });
      expect(settings.find((each) => each.setting === 'tracker.greeting')).toMatchObject({
        value: 'hello',
        reload: false,
      });
      expect(settings.find((each) => each.setting === 'body limit')).toMatchObject({
        module: 'berth',
        value: 2048,
      });
    } finally {
      await server.close();
    }
  });

  it('in release mode each setting is one JSON record', async () => {
    const log = capture();
    const server = await startServer(app, {
      cwd: tempDir(),
      flags: { port: '0' },
      env: { BERTH_MODE: 'release', TRACKER_MAX: '4' },
      logDestination: log.stream,
    });
    await server.close();
    const records = log
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.msg === 'setting');
    expect(records.find((record) => record.setting === 'tracker.maxTasksPerProject')).toMatchObject({
      module: 'tracker',
      value: 4,
      secret: false,
      source: 'the environment variable TRACKER_MAX',
    });
    expect(records.find((record) => record.setting === 'mode')).toMatchObject({ value: 'release' });
  });

  it('a reload logs what changed once, with its old and new value and source, and the overview follows', async () => {
    const cwd = tempDir();
    const config = join(cwd, 'berth.config.json');
    writeFileSync(config, JSON.stringify({ tracker: { maxTasksPerProject: 3 } }));
    const log = capture();
    const server = await startServer(app, {
      cwd,
      flags: { port: '0' },
      env: { BERTH_ADMIN_TOKEN: testAdminToken },
      logDestination: log.stream,
    });
    try {
      const before = log.text().length;
      writeFileSync(config, JSON.stringify({ tracker: { maxTasksPerProject: 5, greeting: 'hi' } }));
      const outcome = await server.reload();
      expect(outcome?.ok).toBe(true);
      expect(outcome?.message).toContain(
        `applied tracker.maxTasksPerProject 3 → 5 ("tracker.maxTasksPerProject" in ${config})`,
      );
      expect(outcome?.message).toContain('a restart applies tracker.greeting');
      const reloadLog = log.text().slice(before);
      expect(reloadLog).not.toContain('no setting it applies changed');
      expect(reloadLog.match(/applied tracker\.maxTasksPerProject/g)).toHaveLength(1);
      expect(reloadLog.match(/3 → 5/g)).toHaveLength(1);
      expect(reloadLog).toContain('tracker.greeting hello → hi (');
      const settings = await overview(server.url);
      expect(settings.find((each) => each.setting === 'tracker.maxTasksPerProject')).toMatchObject({
        value: 5,
      });
      // Only a restart applies the greeting: the overview shows what runs.
      expect(settings.find((each) => each.setting === 'tracker.greeting')).toMatchObject({
        value: 'hello',
        source: 'the default',
      });
      expect(await (await fetch(`${server.url}/tracker/settings`)).json()).toEqual({
        maxTasksPerProject: 5,
        greeting: 'hello',
      });

      const quiet = log.text().length;
      const again = await server.reload();
      expect(again?.message).toContain('no setting it applies changed');
      expect(log.text().slice(quiet)).not.toContain('applied');
    } finally {
      await server.close();
    }
  });
});

describe('the in-process test runtime', () => {
  const berth = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  /** Runs a test program as a project would, in its own directory (app.request reads the working directory's files). */
  const run = async (cwd: string, body: string): Promise<unknown> => {
    const program = `
      import { createApp, defineModule, defineRoute, defineSettings, testAdminToken, z } from ${JSON.stringify(berth)};
      const tracker = defineSettings('tracker', {
        maxTasksPerProject: { schema: z.number().int().positive(), default: 10, variable: 'TRACKER_MAX' },
      });
      const app = createApp({ name: 'tracker', modules: [defineModule({ name: 'tracker', settings: tracker, routes: [
        defineRoute({ method: 'GET', path: '/max', summary: 'max', handler: ({ services }) => tracker.of(services) }),
      ] })] });
      const admin = { headers: { authorization: 'Bearer ' + testAdminToken } };
      const out = {};
      ${body}
      console.log(JSON.stringify(out));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program], {
      cwd,
      env: { PATH: process.env.PATH },
    });
    return JSON.parse(stdout) as unknown;
  };

  it('reads berth.config.json as start does, and a test client overrides a module’s settings', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'berth.config.json'), JSON.stringify({ tracker: { maxTasksPerProject: 3 } }));
    const out = (await run(
      cwd,
      `
      out.request = await (await app.request('/max')).json();
      const client = app.testClient({ settings: { tracker: { maxTasksPerProject: 1 } } });
      out.client = await (await client.request('/max')).json();
      const overview = await (await client.request('/admin/overview', admin)).json();
      out.entry = overview.settings.find((each) => each.setting === 'tracker.maxTasksPerProject');
      out.unknown = await app.testClient({ settings: { tracker: { max: 1 } } }).request('/max').then(() => 'answered', (error) => error.message);
      out.bad = await app.testClient({ settings: { tracker: { maxTasksPerProject: 0 } } }).request('/max').then(() => 'answered', (error) => error.message);
      `,
    )) as Record<string, unknown>;
    expect(out.request).toEqual({ maxTasksPerProject: 3 });
    expect(out.client).toEqual({ maxTasksPerProject: 1 });
    expect(out.entry).toMatchObject({ value: 1, source: 'the test client’s settings' });
    expect(out.unknown).toBe('tracker.max is not a setting of module tracker: use maxTasksPerProject');
    expect(out.bad).toMatch(/^invalid tracker\.maxTasksPerProject 0 from the test client’s settings: /);
  });

  it('a setting that does not parse fails app.request with the message start would give', async () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'berth.config.json'),
      JSON.stringify({ tracker: { maxTasksPerProject: 'lots' } }),
    );
    const out = (await run(
      cwd,
      `out.error = await app.request('/max').then(() => 'answered', (error) => error.message);`,
    )) as {
      error: string;
    };
    expect(out.error).toMatch(
      /^invalid tracker\.maxTasksPerProject "lots" from "tracker\.maxTasksPerProject" in .*berth\.config\.json: /,
    );
  });
});

describe('app.request from any entry', () => {
  it('answers when only berth/core is imported (the package’s node condition registers the runtime)', async () => {
    const program = `
      import { createApp, defineModule, defineRoute } from 'berth/core';
      const app = createApp({ name: 'only-core', modules: [defineModule({ name: 'hello', routes: [
        defineRoute({ method: 'GET', path: '/hello', summary: 'Says hello', handler: () => ({ hello: 'core' }) }),
      ] })] });
      const response = await app.request('/hello');
      console.log(JSON.stringify({ status: response.status, body: await response.json() }));
    `;
    // Inside the package, `berth/core` resolves through its own exports (self-reference), as a project's would.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    expect(JSON.parse(stdout)).toEqual({ status: 200, body: { hello: 'core' } });
  });
});
