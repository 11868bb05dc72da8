/**
 * The AsyncAPI 3.0 document of an app's realtime API, from the same
 * declarations as its OpenAPI document: each collection's events (changes,
 * live queries), the subscribe messages, and each channel (over socket.io
 * and as a plain WebSocket), with their payloads' JSON Schemas.
 */
import type { ChannelDefinition } from './channel.js';
import type { CollectionDefinition } from './collection.js';
import { toJsonSchema, type JsonSchema } from './json-schema.js';

export interface AsyncApiApp {
  name: string;
  version: string;
  description?: string;
  collections: readonly CollectionDefinition[];
  channels: readonly ChannelDefinition[];
}

type Document = Record<string, unknown>;

/** A JSON Schema as AsyncAPI's schema object takes it (draft-07 based: no `$schema` of another draft). */
const schemaOf = (schema: JsonSchema): JsonSchema => {
  const { $schema: _, ...rest } = schema as JsonSchema & { $schema?: string };
  return rest;
};

/** socket.io sends an event's arguments; the payload is their array, in order (a tuple). */
const args = (...items: JsonSchema[]): JsonSchema => ({
  type: 'array',
  items,
  minItems: items.length,
  maxItems: items.length,
});

const seqMeta: JsonSchema = {
  type: 'object',
  required: ['seq'],
  properties: { seq: { type: 'integer', minimum: 1, description: 'Its place in the change log.' } },
};
const liveMeta: JsonSchema = {
  type: 'object',
  required: ['seq', 'query'],
  properties: {
    seq: { type: 'integer', minimum: 1 },
    query: { type: 'string', description: 'The live query it belongs to, as the client sent it.' },
    after: {
      type: ['string', 'null'],
      description:
        'On an enter or a change: the id of the record before it in the result, null when it is first (put it there: the database may order values otherwise than the client would, text past U+FFFF say).',
    },
    more: {
      type: 'boolean',
      const: true,
      description: 'More events of the same change follow: the result stands after the last one.',
    },
  },
};
const message: JsonSchema = {
  description: 'Text, or bytes for a binary frame.',
  anyOf: [{ type: 'string' }, { type: 'object', description: 'binary' }],
};
/** Over socket.io a channel's answer keeps its type: text, bytes, or a number. */
const answer: JsonSchema = {
  description: 'A message (text, or bytes), or the channel’s answer (text, bytes or a number).',
  anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'object', description: 'binary' }],
};

/**
 * `realtimePath`: where socket.io is served (no slashes); `url`: where the
 * server listens (`http://localhost:4500`), for the servers' host.
 */
export function generateAsyncApi(
  app: AsyncApiApp,
  options: { realtimePath: string; url?: string },
): Document {
  const address = options.url ? new URL(options.url) : undefined;
  const host = address?.host ?? 'localhost';
  const protocol = address?.protocol === 'https:' ? 'wss' : 'ws';
  const channels: Document = {};
  const operations: Document = {};
  const socketIo = { $ref: '#/servers/socketio' };
  const websocket = { $ref: '#/servers/websocket' };

  /** One socket.io event (or WebSocket path): its channel, its message, and who sends it. */
  const event = (
    name: string,
    summary: string,
    payload: JsonSchema,
    sentBy: 'server' | 'client' | 'both',
    server = socketIo,
  ): void => {
    const key = name.replace(/[^A-Za-z0-9_.-]/g, '_');
    channels[key] = {
      address: name,
      title: name,
      summary,
      servers: [server],
      messages: { [key]: { name, title: name, payload } },
    };
    const ref = { $ref: `#/channels/${key}` };
    const messages = [{ $ref: `#/channels/${key}/messages/${key}` }];
    if (sentBy !== 'client') operations[`send_${key}`] = { action: 'send', channel: ref, messages };
    if (sentBy !== 'server') operations[`receive_${key}`] = { action: 'receive', channel: ref, messages };
  };

  event(
    'subscribe',
    'Subscribes to a collection: its name, { topic, since } to resume, or { topic, query } for a live query; the ack says where the log stands',
    args({
      oneOf: [
        { type: 'string', description: 'A collection' },
        {
          type: 'object',
          required: ['topic'],
          properties: {
            topic: { type: 'string' },
            since: { type: 'integer', minimum: 0, description: 'The seq of the last event the client has.' },
            query: { type: 'string', description: 'A list query string, as GET takes it.' },
            caller: {
              type: 'string',
              description:
                'With a live query’s since: the stamp its last ack gave (whom the result was read for).',
            },
          },
        },
      ],
    }),
    'client',
  );
  event(
    'unsubscribe',
    'Ends a subscription: a collection, or { topic, query } for a live query',
    args({
      oneOf: [
        { type: 'string' },
        {
          type: 'object',
          required: ['topic', 'query'],
          properties: { topic: { type: 'string' }, query: { type: 'string' } },
        },
      ],
    }),
    'client',
  );
  event(
    'berth:error',
    'The server ends this client’s connection or one of its subscriptions, and says why',
    args({
      type: 'object',
      required: ['code', 'reason'],
      properties: {
        code: { type: 'integer' },
        reason: { type: 'string' },
        topic: { type: 'string' },
        query: { type: 'string' },
      },
    }),
    'server',
  );

  for (const collection of app.collections) {
    const record = schemaOf(toJsonSchema(collection.schemas.record, 'output'));
    const { name } = collection;
    for (const action of ['created', 'updated', 'deleted'] as const) {
      event(
        `${name}:${action}`,
        `A ${name} record was ${action} (deleted: as it was), as the subscriber may see it`,
        args(record, seqMeta),
        'server',
      );
    }
    event(
      `${name}:enter`,
      `A ${name} record entered a live query’s result`,
      args(record, liveMeta),
      'server',
    );
    event(
      `${name}:change`,
      `A ${name} record in a live query’s result changed, and is still in it`,
      args(record, liveMeta),
      'server',
    );
    event(
      `${name}:leave`,
      `A ${name} record left a live query’s result`,
      args({ type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, liveMeta),
      'server',
    );
  }

  const roomRequest = args({
    type: 'object',
    required: ['channel', 'room'],
    properties: {
      channel: { type: 'string' },
      room: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' },
    },
  });
  if (app.channels.length) {
    event('join', 'Joins a room of a channel; the ack says who is in it', roomRequest, 'client');
    event('leave', 'Leaves a room of a channel', roomRequest, 'client');
  }
  const presence = args({
    type: 'object',
    required: ['room', 'client'],
    properties: { room: { type: 'string' }, client: { type: 'string' } },
  });
  for (const channel of app.channels) {
    const about = channel.description ?? `The ${channel.name} channel`;
    event(
      `${channel.name}:message`,
      `Another member's message to a room of ${channel.name}`,
      args(message, {
        type: 'object',
        required: ['room', 'from'],
        properties: {
          room: { type: 'string' },
          from: { type: 'string', description: 'The sender’s client id.' },
        },
      }),
      'server',
    );
    event(`${channel.name}:join`, `Someone else joined a room of ${channel.name}`, presence, 'server');
    event(
      `${channel.name}:leave`,
      `Someone else left a room of ${channel.name}, or disconnected`,
      presence,
      'server',
    );
    event(channel.name, `${about} (socket.io: a message, and the channel’s answer)`, args(answer), 'both');
    event(
      `/${channel.name}`,
      `${about} (a plain WebSocket at /${channel.name}, \`?room=\` to join rooms: each frame a message; the answers as frames; a room's messages and presence as JSON text frames)`,
      message,
      'both',
      websocket,
    );
  }

  // The collections' events over a plain WebSocket: the same events and requests, each as one JSON frame.
  const topicEvents = app.collections.flatMap(({ name }) =>
    ['created', 'updated', 'deleted', 'enter', 'change', 'leave'].map((action) => `${name}:${action}`),
  );
  const eventsKey = 'events_websocket';
  const frames = {
    eventsFrame: {
      name: 'event',
      title: 'An event',
      summary: 'A server event of this document: its name, and its arguments as socket.io sends them',
      payload: {
        type: 'object',
        required: ['event', 'data'],
        properties: {
          event: {
            type: 'string',
            enum: ['berth:error', ...topicEvents],
          },
          data: { type: 'array', description: 'The arguments, as the event’s socket.io channel lists them.' },
        },
      },
    },
    eventsAck: {
      name: 'ack',
      title: 'An answer',
      summary: 'The answer to a request that carried an id: the same as socket.io’s ack',
      payload: { type: 'object', required: ['id', 'ack'], properties: { id: {}, ack: { type: 'object' } } },
    },
    eventsError: {
      name: 'error',
      title: 'A frame it could not read',
      summary:
        'The answer to a frame that is not JSON, or is binary, and carried no id; the connection stays',
      payload: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
    },
    eventsRequest: {
      name: 'request',
      title: 'A request',
      summary:
        'subscribe or unsubscribe (data as socket.io takes them), auth ({ token }) before the first subscribe, or ping (no data; its ack { ok: true } says the connection stands)',
      payload: {
        type: 'object',
        required: ['event'],
        properties: {
          event: { type: 'string', enum: ['subscribe', 'unsubscribe', 'auth', 'ping'] },
          data: {},
          id: {
            oneOf: [{ type: 'number' }, { type: 'string' }],
            description: 'Asks for an ack with this id.',
          },
        },
      },
    },
  };
  channels[eventsKey] = {
    address: `/${options.realtimePath}/events`,
    title: 'events (plain WebSocket)',
    summary:
      'The collections’ events and live queries over a plain WebSocket: each a JSON text frame { event, data }; a token in Authorization: Bearer, or an auth request first',
    servers: [websocket],
    messages: frames,
  };
  const eventsRef = { $ref: `#/channels/${eventsKey}` };
  const framesOf = (...names: Array<keyof typeof frames>) =>
    names.map((name) => ({ $ref: `#/channels/${eventsKey}/messages/${name}` }));
  operations[`send_${eventsKey}`] = {
    action: 'send',
    channel: eventsRef,
    messages: framesOf('eventsFrame', 'eventsAck', 'eventsError'),
  };
  operations[`receive_${eventsKey}`] = {
    action: 'receive',
    channel: eventsRef,
    messages: framesOf('eventsRequest'),
  };

  return {
    asyncapi: '3.0.0',
    info: {
      title: `${app.name} realtime`,
      version: app.version,
      description: `${app.description ? `${app.description}\n\n` : ''}Events of the change log, live queries and channels, over socket.io and plain WebSockets. Generated from the app's declarations.`,
    },
    defaultContentType: 'application/json',
    servers: {
      socketio: {
        host,
        pathname: `/${options.realtimePath}`,
        protocol,
        description: 'socket.io (Engine.IO 4): each channel of this document is an event name',
      },
      websocket: {
        host,
        protocol,
        description: 'Plain WebSockets: each channel of this document is a path',
      },
    },
    channels,
    operations,
  };
}
