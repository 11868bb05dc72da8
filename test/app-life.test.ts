import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBrowserServer } from '../src/browser/browser-server.js';
import {
  createApp,
  defineCollection,
  defineModule,
  defineSettings,
  field,
  type AppContext,
  z,
} from '../src/internal.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { repoRoot, run, tempDir } from './helpers/processes.js';

const lifeApp = join(repoRoot, 'test', 'fixtures', 'life-app.mjs');
const lines = (dir: string): string[] => readFileSync(join(dir, 'life.log'), 'utf8').trim().split('\n');

/** A module that records what its onStart and onClose saw of the app's services. */
function recording() {
  const seen: string[] = [];
  const notes = defineCollection({ name: 'notes', fields: { text: field.text() } });
  const settings = defineSettings('recorder', { greeting: { schema: z.string(), default: 'hello' } });
  const module = defineModule({
    name: 'recorder',
    collections: [notes],
    settings,
    hooks: {
      async onStart({ services }: AppContext) {
        await services.storage.repository(notes).create({ text: 'written at start' });
        services.logger.info({}, 'recorder started');
        seen.push(`start ${settings.of(services).greeting} ${services.mode}`);
      },
      async onClose({ services }: AppContext) {
        const { total } = await services.storage.repository(notes).list({ limit: 1 });
        seen.push(`close ${total}`);
      },
    },
  });
  return { seen, module };
}

describe('one start and one stop of an app, on every runtime', () => {
  it('a test client: onStart(context) writes through context.services, close() runs onClose, then closes storage', async () => {
    const { seen, module } = recording();
    const app = createApp({ name: 'recorded', modules: [module] });
    const client = app.testClient({ settings: { recorder: { greeting: 'hi' } } });
    const list = (await (await client.request('/notes')).json()) as { total: number };
    expect(list.total).toBe(1);
    expect(seen).toEqual(['start hi debug']);
    await client.close();
    expect(seen).toEqual(['start hi debug', 'close 1']);
  });

  it('the page’s server has a close(): onClose, then storage closed', async () => {
    const { seen, module } = recording();
    const server = createBrowserServer({ modules: [module], storage: openSqliteStorage(':memory:') });
    await server.ready;
    expect(seen).toEqual(['start hello release']);
    await server.close();
    expect(seen).toEqual(['start hello release', 'close 1']);
  });

  it('berth start: onStart before listening and onClose at SIGTERM, in the one process', async () => {
    const cwd = tempDir();
    const server = run(lifeApp, ['start'], { cwd, env: { PORT: '0', LIFE_LABEL: 'labelled' } });
    await server.waitFor(/listening on http:\/\/localhost:\d+/);
    const pid = server.child.pid!;
    expect(lines(cwd)).toEqual([`start ${pid} labelled`]);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(lines(cwd)).toEqual([`start ${pid} labelled`, `close ${pid} 1`]);
  });

  it('with --workers 2 the primary only migrates; onStart and onClose run once in each worker', async () => {
    const cwd = tempDir();
    const server = run(lifeApp, ['start', '--workers', '2'], {
      cwd,
      env: { PORT: '0', BERTH_MODE: 'release' },
    });
    await server.waitFor(/listening on http:\/\/localhost:\d+/);
    const ready = () =>
      [...server.output().matchAll(/"msg":"worker (\d+) ready"/g)].map((match) => Number(match[1]));
    await expect.poll(ready, { timeout: 15_000 }).toHaveLength(2);
    const workers = ready().sort();
    const primary = server.child.pid!;
    const started = () => lines(cwd).filter((line) => line.startsWith('start '));
    expect(
      started()
        .map((line) => Number(line.split(' ')[1]))
        .sort(),
    ).toEqual(workers);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    const closed = lines(cwd).filter((line) => line.startsWith('close '));
    expect(closed.map((line) => Number(line.split(' ')[1])).sort()).toEqual(workers);
    expect(lines(cwd).some((line) => line.split(' ')[1] === String(primary))).toBe(false);
    // Each worker wrote one record at its start, through its context's storage, to the one database.
    expect(closed.every((line) => line.endsWith(' 2'))).toBe(true);
  });
});
