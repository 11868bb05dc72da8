import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { adminWrite, connectedSocket, startRealtimeServer } from './helpers/realtime-server.js';

type Document = {
  channels: Record<string, { address: string; messages: Record<string, { payload: object }> }>;
  operations: Record<string, { channel: { $ref: string }; messages: Array<{ $ref: string }> }>;
};

/** What AsyncAPI's own parser says of a document: its errors and warnings (infos and hints left out). */
async function parserFindings(document: object): Promise<string[]> {
  const { diagnostics } = await new Parser().parse(JSON.stringify(document));
  return diagnostics
    .filter(
      ({ severity }) => severity === DiagnosticSeverity.Error || severity === DiagnosticSeverity.Warning,
    )
    .map(({ code, message, path }) => `${String(code)} at ${path.join('.')}: ${message}`);
}

describe('the AsyncAPI document (GET /docs/asyncapi)', () => {
  it('is valid AsyncAPI 3.0, every reference resolves, and every operation’s messages are its channel’s', async () => {
    const server = await startRealtimeServer();
    const response = await fetch(`${server.url}/docs/asyncapi`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const document = (await response.json()) as Document & { asyncapi: string };
    expect(document.asyncapi).toBe('3.0.0');
    // AsyncAPI's parser: the schema, every reference resolved, and its rules (ids, names, operations).
    expect(await parserFindings(document)).toEqual([]);
    for (const [name, operation] of Object.entries(document.operations)) {
      for (const { $ref } of operation.messages)
        expect($ref.startsWith(`${operation.channel.$ref}/messages/`), name).toBe(true);
    }
    // A broken document fails: the parser can say no, to a missing field and to a reference to nothing.
    expect((await parserFindings({ ...document, info: { title: 'no version' } })).join('\n')).toMatch(
      /version/,
    );
    const [first] = Object.values(document.operations);
    first!.messages.push({ $ref: '#/components/messages/nothing' });
    expect((await parserFindings(document)).join('\n')).toMatch(/nothing/);
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
