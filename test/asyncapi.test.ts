import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { adminWrite, connectedSocket, startRealtimeServer } from './helpers/realtime-server.js';

type Document = {
  channels: Record<string, { address: string; messages: Record<string, { payload: object }> }>;
  operations: Record<string, { channel: { $ref: string }; messages: Array<{ $ref: string }> }>;
};

/** AsyncAPI 3.0.0's own JSON Schema (`@asyncapi/specs`), as its parser uses it. */
function asyncApiValidator(): ValidateFunction {
  const schema = structuredClone(createRequire(import.meta.url)('@asyncapi/specs/schemas/3.0.0.json')) as {
    definitions: Record<string, unknown>;
  };
  // The meta-schemas it embeds clash with Ajv's own (the parser removes them too).
  delete schema.definitions['http://json-schema.org/draft-07/schema'];
  delete schema.definitions['http://json-schema.org/draft-04/schema'];
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

/** Every `$ref` of the document points at something in it (the JSON Schema above does not look). */
function unresolved(document: object): string[] {
  const missing: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string') {
          let target: unknown = document;
          for (const part of inner.replace(/^#\//, '').split('/'))
            target = (target as Record<string, unknown> | undefined)?.[part.replaceAll('~1', '/')];
          if (target === undefined) missing.push(inner);
        } else walk(inner);
      }
    }
  };
  walk(document);
  return missing;
}

describe('the AsyncAPI document (GET /docs/asyncapi)', () => {
  it('is valid AsyncAPI 3.0, every reference resolves, and every operation’s messages are its channel’s', async () => {
    const server = await startRealtimeServer();
    const response = await fetch(`${server.url}/docs/asyncapi`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const document = (await response.json()) as Document & { asyncapi: string };
    expect(document.asyncapi).toBe('3.0.0');
    const validate = asyncApiValidator();
    expect(validate(document), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
    expect(unresolved(document)).toEqual([]);
    for (const [name, operation] of Object.entries(document.operations)) {
      for (const { $ref } of operation.messages)
        expect($ref.startsWith(`${operation.channel.$ref}/messages/`), name).toBe(true);
    }
    // A broken document fails: the validator can say no.
    expect(validate({ ...document, info: { title: 'no version' } })).toBe(false);
    expect(document.channels['books_created']?.address).toBe('books:created');
  });

  it('documents every event a client sees at runtime, and each payload validates against its schema', async () => {
    const server = await startRealtimeServer();
    const document = (await (await fetch(`${server.url}/docs/asyncapi`)).json()) as Document;
    const byAddress = new Map(Object.values(document.channels).map((channel) => [channel.address, channel]));
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const socket = await connectedSocket(server.url);
    const seen: Array<{ event: string; args: unknown[] }> = [];
    socket.onAny((event: string, ...args: unknown[]) => seen.push({ event, args }));
    const sent: Array<{ event: string; args: unknown[] }> = [];
    const emit = async (event: string, ...args: unknown[]) => {
      sent.push({ event, args });
      return socket.emitWithAck(event, ...args);
    };
    await emit('subscribe', 'books');
    await emit('subscribe', { topic: 'books', query: 'sort=-year&limit=3' });
    const created = (await (
      await adminWrite(server.url, 'POST', '/books', { title: 'Seen', author: 'A', year: 2100 })
    ).json()) as {
      id: string;
    };
    await adminWrite(server.url, 'PATCH', `/books/${created.id}`, { title: 'Seen again' });
    await adminWrite(server.url, 'DELETE', `/books/${created.id}`);
    await emit('join', { channel: 'chat', room: 'lobby' });
    const other = await connectedSocket(server.url);
    await other.emitWithAck('join', { channel: 'chat', room: 'lobby' });
    await other.emitWithAck('chat', 'from the other one');
    other.disconnect();
    await emit('chat', 'hello');
    await emit('subscribe', { topic: 'books', since: 1 });
    await expect
      .poll(() => new Set(seen.map(({ event }) => event)))
      .toEqual(
        new Set([
          'books:created',
          'books:updated',
          'books:deleted',
          'books:enter',
          'books:change',
          'books:leave',
          'chat',
          'chat:join',
          'chat:message',
          'chat:leave',
        ]),
      );
    for (const { event, args } of [...seen, ...sent]) {
      const channel = byAddress.get(event);
      expect(channel, `${event} is not documented`).toBeDefined();
      const [message] = Object.values(channel!.messages);
      const valid = ajv.validate(message!.payload, args);
      expect(valid, `${event}: ${JSON.stringify(ajv.errors)}`).toBe(true);
    }
    socket.disconnect();
  });

  it('documents the plain events WebSocket: every frame it sends, and each event’s data as its socket.io channel', async () => {
    const server = await startRealtimeServer();
    const document = (await (await fetch(`${server.url}/docs/asyncapi`)).json()) as Document;
    const byAddress = new Map(Object.values(document.channels).map((channel) => [channel.address, channel]));
    const events = byAddress.get('/socket.io/events');
    expect(events).toBeDefined();
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/socket.io/events`);
    const frames: Array<{ event?: string; data?: unknown[]; id?: number; error?: string }> = [];
    socket.on('message', (data) => frames.push(JSON.parse(String(data)) as (typeof frames)[number]));
    await new Promise((done) => socket.once('open', done));
    const requests = [
      { event: 'subscribe', data: 'books', id: 1 },
      { event: 'subscribe', data: { topic: 'books', query: 'sort=-year&limit=3' }, id: 2 },
      { event: 'unsubscribe', data: 'nothing' },
    ];
    socket.send('not JSON');
    for (const request of requests) {
      expect(
        ajv.validate(events!.messages['eventsRequest']!.payload, request),
        JSON.stringify(ajv.errors),
      ).toBe(true);
      socket.send(JSON.stringify(request));
    }
    await expect.poll(() => frames.filter((frame) => frame.id !== undefined).length).toBe(2);
    expect(frames.filter((frame) => frame.error !== undefined)).toHaveLength(1);
    const created = (await (
      await adminWrite(server.url, 'POST', '/books', { title: 'Seen', author: 'A', year: 2100 })
    ).json()) as { id: string };
    await adminWrite(server.url, 'DELETE', `/books/${created.id}`);
    await expect
      .poll(() => new Set(frames.map(({ event }) => event).filter(Boolean)))
      .toEqual(new Set(['books:created', 'books:deleted', 'books:enter', 'books:leave']));
    for (const frame of frames) {
      const message =
        frame.id !== undefined ? 'eventsAck' : frame.event === undefined ? 'eventsError' : 'eventsFrame';
      expect(ajv.validate(events!.messages[message]!.payload, frame), JSON.stringify(ajv.errors)).toBe(true);
      if (frame.event === undefined) continue;
      const [payload] = Object.values(byAddress.get(frame.event)!.messages);
      expect(
        ajv.validate(payload!.payload, frame.data),
        `${frame.event}: ${JSON.stringify(ajv.errors)}`,
      ).toBe(true);
    }
    // The schema can say no: an event this server never sends.
    expect(ajv.validate(events!.messages['eventsFrame']!.payload, { event: 'books:renamed', data: [] })).toBe(
      false,
    );
    socket.close();
  });
});
