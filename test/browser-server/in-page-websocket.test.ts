import { describe, expect, it } from 'vitest';
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
        socket.onmessage = (event) => replies.push(String(event.data));
        socket.send('abc');
        socket.send(new Blob(['12345']));
        socket.send(new Uint8Array([1, 2, 3, 4]));
        socket.send(new ArrayBuffer(2));
        await new Promise((done) => setTimeout(done, 50));
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
});
