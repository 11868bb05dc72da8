import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { repoRoot } from '../helpers/processes.js';
import { openPlayground, useChromium } from './helpers.js';

const browser = useChromium();

describe('the in-page WebSocket class in Chromium', () => {
  it('behaves as the browser’s own WebSocket on the Node server’s /chat: constants, events, binary, order, close codes', async () => {
    const { page } = await openPlayground(await browser());
    const scenario = (kind: 'in-page' | 'native') =>
      page.evaluate(async (kind) => {
        const { berth } = window as unknown as { berth: { WebSocket: typeof WebSocket } };
        const Socket = kind === 'in-page' ? berth.WebSocket : WebSocket;
        const socket = new Socket(kind === 'in-page' ? 'ws://chat/chat' : `ws://${location.host}/chat`);
        const events: string[] = [];
        socket.addEventListener('open', () => events.push('open listener'));
        socket.onopen = () => events.push('onopen');
        socket.binaryType = 'arraybuffer';
        const initial = socket.readyState;
        let sendWhileConnecting = '';
        try {
          socket.send('too early');
        } catch (error) {
          sendWhileConnecting = (error as DOMException).name;
        }
        await new Promise((done) => socket.addEventListener('open', done));
        const replies: string[] = [];
        // The four replies, or what came within 5 s (a loaded machine may take longer than a moment).
        const answered = new Promise<void>((done) => {
          socket.onmessage = (event) => replies.push(String(event.data)) === 4 && done();
          setTimeout(done, 5000);
        });
        socket.send('abc');
        socket.send(new Blob(['12345']));
        socket.send(new Uint8Array([1, 2, 3, 4]));
        socket.send(new ArrayBuffer(2));
        await answered;
        let badCode = '';
        try {
          socket.close(1001);
        } catch (error) {
          badCode = (error as DOMException).name;
        }
        const closed = new Promise<CloseEvent>((done) =>
          socket.addEventListener('close', (event) => done(event as CloseEvent)),
        );
        socket.close(4000, 'done');
        const closing = socket.readyState;
        socket.send('dropped after close');
        const close = await closed;
        return {
          constants: [
            berth.WebSocket.CONNECTING,
            berth.WebSocket.OPEN,
            berth.WebSocket.CLOSING,
            berth.WebSocket.CLOSED,
          ],
          instanceConstants: [socket.CONNECTING, socket.OPEN, socket.CLOSING, socket.CLOSED],
          binaryType: socket.binaryType,
          protocol: socket.protocol,
          initial,
          sendWhileConnecting,
          events,
          replies,
          badCode,
          closing,
          close: {
            code: close.code,
            reason: close.reason,
            wasClean: close.wasClean,
            type: close.constructor.name,
          },
          final: socket.readyState,
        };
      }, kind);
    const expected = {
      constants: [0, 1, 2, 3],
      instanceConstants: [0, 1, 2, 3],
      binaryType: 'arraybuffer',
      protocol: '',
      initial: 0,
      sendWhileConnecting: 'InvalidStateError',
      events: ['open listener', 'onopen'],
      replies: ['3', '5', '4', '2'],
      badCode: 'InvalidAccessError',
      closing: 2,
      close: { code: 4000, reason: 'done', wasClean: true, type: 'CloseEvent' },
      final: 3,
    };
    expect(await scenario('native')).toEqual(expected);
    expect(await scenario('in-page')).toEqual(expected);
  });

  it('two sockets in one room see each other’s messages, as on the Node server’s /chat?room=', async () => {
    const { page } = await openPlayground(await browser());
    const scenario = (kind: 'in-page' | 'native') =>
      page.evaluate(async (kind) => {
        const { berth } = window as unknown as { berth: { WebSocket: typeof WebSocket } };
        const Socket = kind === 'in-page' ? berth.WebSocket : WebSocket;
        const url = `ws://${kind === 'in-page' ? 'chat' : location.host}/chat?room=lobby`;
        const open = async (frames: string[]) => {
          const socket = new Socket(url);
          socket.onmessage = (event) => frames.push(String(event.data));
          await new Promise((done) => socket.addEventListener('open', done));
          return socket;
        };
        const seenA: string[] = [];
        const seenB: string[] = [];
        const a = await open(seenA);
        const b = await open(seenB);
        const settled = (frames: string[], count: number) =>
          new Promise<void>((done) => {
            const check = setInterval(() => {
              if (frames.length < count) return;
              clearInterval(check);
              done();
            }, 10);
            setTimeout(() => {
              clearInterval(check);
              done();
            }, 5000);
          });
        await settled(seenA, 1);
        a.send('hi from a');
        await settled(seenB, 1);
        b.send(new Uint8Array([1, 2, 3]));
        // The room's copy to A and the length answer to B travel apart: B closes once both came.
        await settled(seenA, 3);
        await settled(seenB, 2);
        b.close();
        await settled(seenA, 4);
        a.close();
        // Client ids differ by transport: name them by who they are.
        const idOf = (frames: string[]) =>
          (JSON.parse(frames.find((frame) => frame.startsWith('{"join"'))!) as { join: { client: string } })
            .join.client;
        const idB = idOf(seenA);
        const named = (frames: string[]) =>
          frames.map((frame) => frame.replaceAll(idB, 'B').replace(/"from":"(?!B")[^"]+"/, '"from":"A"'));
        return { a: named(seenA), b: named(seenB) };
      }, kind);
    const expected = {
      a: [
        '{"join":{"room":"lobby","client":"B"}}',
        '9',
        '{"room":"lobby","from":"B","bytes":"AQID"}',
        '{"leave":{"room":"lobby","client":"B"}}',
      ],
      b: ['{"room":"lobby","from":"A","message":"hi from a"}', '3'],
    };
    expect(await scenario('native')).toEqual(expected);
    expect(await scenario('in-page')).toEqual(expected);
  });

  it('an unknown channel, or closing while connecting, fails as the browser’s own does: error, then close 1006', async () => {
    const { page } = await openPlayground(await browser());
    const scenario = (kind: 'in-page' | 'native') =>
      page.evaluate(async (kind) => {
        const { berth } = window as unknown as { berth: { WebSocket: typeof WebSocket } };
        const Socket = kind === 'in-page' ? berth.WebSocket : WebSocket;
        const host = kind === 'in-page' ? 'chat' : location.host;
        const watch = (socket: WebSocket) =>
          new Promise<string[]>((done) => {
            const seen: string[] = [];
            socket.onerror = () => seen.push('error');
            socket.onopen = () => seen.push('open');
            socket.onclose = (event) =>
              done([...seen, `close ${event.code} ${event.wasClean}`, `state ${socket.readyState}`]);
          });
        const unknown = watch(new Socket(`ws://${host}/nowhere`));
        const early = new Socket(`ws://${host}/chat`);
        const earlyClosed = watch(early);
        early.close();
        const closing = early.readyState;
        const thrown = (make: () => unknown) => {
          try {
            make();
            return 'nothing';
          } catch (error) {
            return (error as DOMException).name;
          }
        };
        return {
          unknown: await unknown,
          early: await earlyClosed,
          closing,
          badScheme: thrown(() => new Socket(`ftp://${host}/chat`)),
          fragment: thrown(() => new Socket(`ws://${host}/chat#part`)),
        };
      }, kind);
    const expected = {
      unknown: ['error', 'close 1006 false', 'state 3'],
      early: ['error', 'close 1006 false', 'state 3'],
      closing: 2,
      badScheme: 'SyntaxError',
      fragment: 'SyntaxError',
    };
    expect(await scenario('native')).toEqual(expected);
    expect(await scenario('in-page')).toEqual(expected);
  });

  it('code written for the Node server, ws://<this host>/chat, reaches the same channel in the page', async () => {
    const { page } = await openPlayground(await browser());
    const reply = await page.evaluate(async () => {
      const { berth } = window as unknown as { berth: { WebSocket: typeof WebSocket } };
      const socket = new berth.WebSocket(`ws://${location.host}/chat`);
      await new Promise((done) => (socket.onopen = done));
      socket.send('twelve chars');
      return new Promise((done) => (socket.onmessage = (event) => done(event.data)));
    });
    expect(reply).toBe('12');
  });

  it('an async channel handler answers in the page in the order messages were sent; a rejection closes with 1011', async () => {
    // The shipped bundle (`berth/browser`), on a page of its own, with a channel written as a project would.
    const bundle = readFileSync(join(repoRoot, 'dist', 'browser', 'berth-browser.js'), 'utf8');
    const page = await (await browser()).newPage();
    onTestFinished(() => page.close());
    await page.route('http://channels.test/**', (route) =>
      route.fulfill(
        route.request().url().endsWith('.js')
          ? { contentType: 'text/javascript', body: bundle }
          : {
              contentType: 'text/html',
              body: '<script type="module">import * as berth from "/berth-browser.js"; window.bundle = berth;</script>',
            },
      ),
    );
    await page.goto('http://channels.test/');
    await page.waitForFunction(() => 'bundle' in window);
    const result = await page.evaluate(async () => {
      const { bundle } = window as unknown as { bundle: typeof import('../../src/browser/index.js') };
      const { createInPageWebSocket, defineChannel } = bundle;
      const Socket = createInPageWebSocket([
        defineChannel({
          name: 'slow',
          onMessage(message) {
            const text = String(message);
            if (text.startsWith('sync:')) return text;
            return (async () => {
              await new Promise((done) => setTimeout(done, Number(text) || 0));
              if (text === 'reject') throw new Error('the lookup failed');
              return text;
            })();
          },
        }),
      ]);
      const socket = new Socket('ws://slow/slow');
      await new Promise((done) => (socket.onopen = done));
      const replies: string[] = [];
      const sent = ['40', 'sync:a', '0', '20', '5'];
      const all = new Promise<void>((done) => {
        socket.onmessage = (event) => {
          replies.push(String(event.data));
          if (replies.length === sent.length) done();
        };
      });
      for (const message of sent) socket.send(message);
      // Without an answer to each, the result below says what came.
      await Promise.race([all, new Promise((done) => setTimeout(done, 5000))]);
      const closed = new Promise<CloseEvent>((done) => (socket.onclose = done));
      socket.send('reject');
      socket.send('sync:after');
      const close = await Promise.race([closed, new Promise<undefined>((done) => setTimeout(done, 5000))]);
      return {
        replies,
        close: close && { code: close.code, reason: close.reason, wasClean: close.wasClean },
        state: socket.readyState,
      };
    });
    expect(result).toEqual({
      replies: ['40', 'sync:a', '0', '20', '5'],
      close: { code: 1011, reason: 'the channel failed on this message', wasClean: true },
      state: 3,
    });
  });
});
