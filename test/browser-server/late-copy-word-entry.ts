// Two in-page servers on one IndexedDB database (as two tabs), reading from in-memory copies. The word over the
// BroadcastChannel that drops a copy when another context wrote ("berth-indexeddb:<db>:<collection>") comes late
// here, as a message between processes may come after the change-log word and the Web Lock; the change-log word
// ("berth-changes:<db>") comes as it does.
import { createBrowserServer } from '../../src/browser/browser-server.js';
import { defineCollection, defineModule, field } from '../../src/core/internal.js';
import { openIndexedDbStorage } from '../../src/storage/indexeddb.js';

const Native = globalThis.BroadcastChannel;
const lateMs = 400;
class LateCopyWords extends Native {
  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | AddEventListenerOptions,
  ): void {
    if (type === 'message' && this.name.startsWith('berth-indexeddb:') && typeof listener === 'function') {
      return super.addEventListener(
        type,
        (event: Event) => void setTimeout(() => listener.call(this, event), lateMs),
        options,
      );
    }
    return super.addEventListener(type, listener, options);
  }
}
globalThis.BroadcastChannel = LateCopyWords as typeof BroadcastChannel;

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

function thingsServer(name: string) {
  const things = defineCollection({ name: 'things', fields: { title: field.text() } });
  const server = createBrowserServer({
    modules: [defineModule({ name: 'things', collections: [things] })],
    name,
    storage: openIndexedDbStorage(name, { copyUpTo: Infinity }),
  });
  const post = (title: string) =>
    server.fetch('/things', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
    });
  const titles = async () =>
    (
      (await (await server.fetch('/things?sort=title')).json()) as { items: Array<{ title: string }> }
    ).items.map(({ title }) => title);
  /** A live query's result as its events keep it: titles by id. */
  const live = async (query: string) => {
    const result = new Map<string, string>();
    const answer = await server.live('things', query, {
      event: (what, record) =>
        void (what === 'leave'
          ? result.delete(record.id)
          : result.set(record.id, (record as { title?: string }).title ?? '?')),
      error: ({ reason }) => void result.set('error', reason),
    });
    if (!answer.ok) throw new Error(answer.error);
    for (const item of answer.items as Array<{ id: string; title: string }>) result.set(item.id, item.title);
    return result;
  };
  return { server, post, titles, live };
}

(window as unknown as { scenarios: object }).scenarios = {
  /** Another context writes; once this page heard the change, what a list and a new live query answer here. */
  async heardBeforeTheWord() {
    const name = `late-copy-word-${Date.now()}`;
    const [here, there] = [thingsServer(name), thingsServer(name)];
    await here.server.ready;
    await there.server.ready;
    await here.post('before');
    const first = await here.live('sort=title'); // this page follows its log, and has loaded its copy
    await there.post('there');
    const until = performance.now() + 2000;
    while (first.size < 2 && performance.now() < until) await pause(5);
    const heard = [...first.values()].sort();
    const listed = await here.titles();
    const second = await here.live('sort=-title');
    const answered = [...second.values()].sort();
    await pause(lateMs + 200); // the late word came: nothing more arrives for the second query
    const after = { live: [...second.values()].sort(), listed: await here.titles() };
    await here.server.close();
    await there.server.close();
    return { heard, listed, answered, after };
  },
};
