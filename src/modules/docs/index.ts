import type { RegisteredRoute } from '../../core/app.js';
import { defineModule, type ModuleDefinition } from '../../core/module.js';
import { generateOpenApi } from '../../core/openapi.js';
import { generateAsyncApi, type AsyncApiApp } from '../../core/asyncapi.js';
import { defineRoute } from '../../core/route.js';

export interface DocumentedApp extends AsyncApiApp {
  name: string;
  version: string;
  description?: string;
  routes: readonly RegisteredRoute[];
  modules: ReadonlyArray<{ name: string; description?: string; errors?: ModuleDefinition['errors'] }>;
}

/**
 * `GET /docs`: the OpenAPI 3.1 document of every route of the app, Berth's
 * own included. Its `servers` entry is where this server listens (relative
 * `/` where it has no address of its own, as in a page).
 */
export function createDocsModule(app: () => DocumentedApp, realtimePath?: string): ModuleDefinition {
  const documents = new Map<string, string>();
  const asyncDocuments = new Map<string, string>();
  return defineModule({
    name: 'docs',
    description: 'The API reference of this server.',
    routes: [
      defineRoute({
        method: 'GET',
        path: '/docs',
        summary: 'The OpenAPI 3.1 document',
        description: 'Generated from the schemas that validate every request.',
        docs: { successContent: { type: 'application/json', description: 'An OpenAPI 3.1 document.' } },
        handler: ({ services }) => {
          const url = services.runtime.url ?? '/';
          let document = documents.get(url);
          if (!document) {
            const description = url === '/' ? 'This server' : `This server (where it listens)`;
            document = JSON.stringify(generateOpenApi(app(), { servers: [{ url, description }] }));
            documents.set(url, document);
          }
          return new Response(document, {
            headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
          });
        },
      }),
      ...(realtimePath === undefined
        ? []
        : [
            defineRoute({
              method: 'GET',
              path: '/docs/asyncapi',
              summary: 'The AsyncAPI 3.0 document of the realtime API',
              description:
                'The events of the change log and of live queries, the subscribe messages and the channels, over socket.io and plain WebSockets.',
              docs: {
                successContent: { type: 'application/json', description: 'An AsyncAPI 3.0 document.' },
              },
              handler: ({ services }) => {
                const url = services.runtime.url ?? '';
                let document = asyncDocuments.get(url);
                if (!document) {
                  document = JSON.stringify(
                    generateAsyncApi(app(), { realtimePath, ...(url ? { url } : {}) }),
                  );
                  asyncDocuments.set(url, document);
                }
                return new Response(document, {
                  headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
                });
              },
            }),
          ]),
    ],
  });
}
