import type { ChannelDefinition, RealtimeBridge } from '../../core/channel.js';
import { BerthError } from '../../core/errors.js';
import { defineModule, type ModuleDefinition } from '../../core/module.js';
import { defineRoute, type RouteContext } from '../../core/route.js';

declare module '../../core/route.js' {
  interface AppServices {
    /** Serves the realtime transport route, in runtimes that have one. */
    realtime?: RealtimeBridge;
  }
}

function transport({ request, platform, services }: RouteContext<unknown, unknown, unknown>) {
  if (!services.realtime) {
    throw new BerthError('BERTH_UNAVAILABLE', 'realtime is not running in this runtime');
  }
  return services.realtime.transport(request, platform);
}

const transportDocs = {
  successContent: { type: 'text/plain', description: 'A socket.io (engine.io) packet; see socket.io' },
  wildcardName: 'any',
  responses: {
    '101': { description: 'Switching to WebSocket (GET with Upgrade).' },
    '400': {
      description: 'Not a socket.io request this server knows (unknown session, transport or protocol).',
    },
    '403': { description: 'The origin is not allowed, or the realtime connection limits are reached.' },
  },
};

/**
 * The realtime transport at `/{path}/*` (GET and POST: socket.io long-polling
 * and the WebSocket upgrade), and `GET /<channel>` for each channel's plain
 * WebSocket.
 */
export function createRealtimeModule(path: string, channels: readonly ChannelDefinition[]): ModuleDefinition {
  const description = `socket.io transport; events: ${[...channels.map((channel) => channel.name), 'subscribe'].join(', ')}`;
  return defineModule({
    name: 'realtime',
    description: `Realtime: socket.io at /${path}/ (${description}) and a plain WebSocket per channel.`,
    routes: [
      defineRoute({
        method: 'GET',
        path: `/${path}/*`,
        summary: 'Realtime transport (socket.io long-polling and WebSocket upgrade)',
        description,
        docs: transportDocs,
        handler: transport,
      }),
      defineRoute({
        method: 'POST',
        path: `/${path}/*`,
        auth: 'public',
        summary: 'Realtime transport, POST side (socket.io long-polling)',
        description,
        docs: transportDocs,
        handler: transport,
      }),
      ...channels.map((channel) =>
        defineRoute({
          method: 'GET',
          path: `/${channel.name}`,
          summary: `The ${channel.name} channel over a plain WebSocket`,
          description:
            `${channel.description ?? ''} Connect with a WebSocket client (ws://host:port/${channel.name}); a plain GET answers 426.`.trim(),
          docs: {
            successContent: { type: 'text/plain', description: 'Never: the answer is a WebSocket upgrade.' },
            responses: {
              '101': { description: 'Switching to WebSocket.' },
              '426': { description: 'Upgrade required.' },
            },
          },
          handler: () => {
            throw new BerthError(
              'BERTH_UPGRADE_REQUIRED',
              `connect to /${channel.name} with a WebSocket client`,
              {
                headers: { upgrade: 'websocket', connection: 'Upgrade' },
              },
            );
          },
        }),
      ),
    ],
  });
}
