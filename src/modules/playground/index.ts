import { defineModule } from '../../core/module.js';
import { defineRoute } from '../../core/route.js';
import type { StaticAssets } from '../../core/static-assets.js';
import { staticFiles } from '../ui/index.js';

declare module '../../core/route.js' {
  interface AppServices {
    /** Other static sites the app mounts, by name (the in-browser playground). */
    sites?: Record<string, StaticAssets>;
  }
}

const serve = staticFiles('/playground', (services) => services.sites?.playground);
const page = { type: 'text/html', description: 'The in-browser server demo page' };

/**
 * `/playground/`: the in-browser server demo (users on IndexedDB, the chat
 * channel in the page), built into the package. It also works from any
 * static host.
 */
export const playgroundModule = defineModule({
  name: 'playground',
  description: 'The in-browser server demo page.',
  routes: [
    defineRoute({
      method: 'GET',
      path: '/playground',
      summary: 'Redirects to /playground/',
      docs: { successContent: page, responses: { '308': { description: 'To /playground/' } } },
      handler: serve,
    }),
    defineRoute({
      method: 'GET',
      path: '/playground/*',
      summary: 'The in-browser server demo and its files',
      docs: {
        successContent: { type: '*/*', description: 'A file of the demo' },
        wildcardName: 'file',
        responses: {
          '304': { description: 'Not modified (ETag matched).' },
          '404': { description: 'No such file.', problem: true },
        },
      },
      handler: serve,
    }),
  ],
});
