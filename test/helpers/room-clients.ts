import { io as connect, type Socket } from 'socket.io-client';
import WebSocket from 'ws';

/** A socket.io client over WebSocket, connected. */
export function roomSocket(url: string): Promise<Socket> {
  const socket = connect(url, { transports: ['websocket'], reconnection: false, forceNew: true });
  return new Promise((done, fail) => {
    socket.once('connect', () => done(socket));
    socket.once('connect_error', fail);
  });
}

/** What a socket.io client saw of the chat channel's rooms, in order. */
export function chatEvents(socket: Socket): string[] {
  const seen: string[] = [];
  socket.on('chat:message', (message: unknown, meta: { room: string; from: string }) =>
    seen.push(
      `message ${meta.room} ${meta.from}: ${typeof message === 'string' ? message : `<${(message as ArrayBuffer).byteLength} bytes>`}`,
    ),
  );
  socket.on('chat:join', ({ room, client }: { room: string; client: string }) =>
    seen.push(`join ${room} ${client}`),
  );
  socket.on('chat:leave', ({ room, client }: { room: string; client: string }) =>
    seen.push(`leave ${room} ${client}`),
  );
  return seen;
}

/** A plain WebSocket client, open, and every text frame it received. */
export async function roomWebSocket(url: string): Promise<{ client: WebSocket; frames: string[] }> {
  const client = new WebSocket(url);
  const frames: string[] = [];
  client.on('message', (data: Buffer) => frames.push(data.toString()));
  await new Promise<void>((done, fail) => {
    client.once('open', () => done());
    client.once('error', fail);
  });
  return { client, frames };
}

/** The frames that are room events (JSON objects), parsed. */
export const roomFrames = (frames: string[]): object[] =>
  frames.filter((frame) => frame.startsWith('{')).map((frame) => JSON.parse(frame) as object);
