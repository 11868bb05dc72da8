import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp, defineModule } from '../src/core/internal.js';
import { booksModule } from '../src/modules/books/index.js';
import { withBerthModules } from '../src/modules/berth-modules.js';

const pinger = (path: string, name = 'pinger') =>
  defineModule({
    name,
    routes: [{ method: 'GET', path, summary: 'Pong', response: z.string(), handler: () => 'pong' }],
  });

describe('composing an app', () => {
  it('Berth’s modules go around the project’s, whose routes are made once, not again', () => {
    const app = createApp({ name: 'shop', modules: [booksModule] });
    const served = withBerthModules(app, { realtimePath: 'socket.io', metrics: true });
    const modules = served.modules.map(({ name }) => name);
    expect(modules.slice(0, modules.indexOf('books'))).toEqual(['docs', 'admin', 'health', 'metrics']);
    expect(modules.slice(modules.indexOf('books') + 1)).toEqual(['realtime', 'ui']);
    const own = served.routes.filter(({ module }) => module === 'books');
    expect(own.map(({ route }) => route)).toEqual(app.routes.map(({ route }) => route));
    // The same route objects: the project's collection resources were not generated a second time.
    own.forEach(({ route }, index) => expect(route).toBe(app.routes[index]!.route));
    expect(served.collections).toEqual(app.collections);
  });

  it('a module added to the app’s module list after createApp is served with its routes, as before', () => {
    const modules = [booksModule];
    const app = createApp({ name: 'late', modules });
    modules.push(pinger('/late'));
    const served = withBerthModules(app, { realtimePath: undefined });
    expect(served.routes).toContainEqual({
      module: 'pinger',
      route: expect.objectContaining({ path: '/late' }),
    });
    expect(served.modules.map(({ name }) => name)).toContain('pinger');
  });

  it('a module name or a route taken twice throws, in the project or against Berth’s own modules', () => {
    expect(() => createApp({ name: 'x', modules: [pinger('/a'), pinger('/b')] })).toThrow(
      'two modules are named "pinger"',
    );
    expect(() => createApp({ name: 'x', modules: [pinger('/a'), pinger('/a', 'other')] })).toThrow(
      'GET /a is registered by both "pinger" and "other"',
    );
    const takesDocs = createApp({ name: 'x', modules: [pinger('/docs')] });
    expect(() => withBerthModules(takesDocs, { realtimePath: undefined })).toThrow(
      'GET /docs is registered by both "docs" and "pinger"',
    );
    const namedAdmin = createApp({ name: 'x', modules: [pinger('/mine', 'admin')] });
    expect(() => withBerthModules(namedAdmin, { realtimePath: undefined })).toThrow(
      'two modules are named "admin"',
    );
    // Turned off, Berth's module leaves the path to the project.
    const docsOff = createApp({ name: 'x', docs: false, modules: [pinger('/docs')] });
    expect(withBerthModules(docsOff, { realtimePath: undefined }).routes).toContainEqual({
      module: 'pinger',
      route: expect.objectContaining({ path: '/docs' }),
    });
  });
});
