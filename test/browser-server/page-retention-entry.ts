// The in-page server's change log on IndexedDB, trimmed as the Node server trims its own: two loads of a page on
// one database, the second with a log over its size.
import { createBrowserServer } from '../../src/browser/browser-server.js';
import { defineCollection, defineModule, field } from '../../src/core/internal.js';

const notes = defineCollection({ name: 'notes', fields: { title: field.text() } });
const modules = [defineModule({ name: 'notes', collections: [notes] })];
const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

(window as unknown as { scenarios: object }).scenarios = {
  /** 1,200 notes written by a first load; what the next load's log keeps (the size is 1,000). */
  async trimmedAtTheNextLoad() {
    // What the page's own code throws where nothing catches it (a timer of Node's in a browser, say).
    const uncaught: string[] = [];
    addEventListener('unhandledrejection', (event) => void uncaught.push(String(event.reason)));
    addEventListener('error', (event) => void uncaught.push(String(event.message)));
    const name = `page-retention-${Date.now()}`;
    const first = createBrowserServer({ modules, name, changeLogMaxChanges: 1000 });
    await first.ready;
    for (let i = 0; i < 1200; i++) await first.storage.repository(notes).create({ title: `note ${i}` });
    const before = await first.storage.changes!.bounds();
    await first.close();
    const next = createBrowserServer({ modules, name, changeLogMaxChanges: 1000 });
    await next.ready;
    const until = performance.now() + 10_000;
    let after = await next.storage.changes!.bounds();
    while (after.floor === before.floor && performance.now() < until) {
      await pause(50);
      after = await next.storage.changes!.bounds();
    }
    const oldest = (await next.storage.changes!.read(0, 1))[0]?.record.title;
    // The page's own writes go on after the trim.
    await next.storage.repository(notes).create({ title: 'after' });
    const head = (await next.storage.changes!.bounds()).head;
    await next.close();
    await pause(100);
    return { before, after, oldest, head, uncaught };
  },
};
