import { describe, expect, it } from 'vitest';
import type { Authenticator, Caller, ChangeEvent, Logger, Topic } from '../src/core/internal.js';
import { closingEvent, createSubscriptions, type Subscriber } from '../src/realtime/subscriptions.js';

/** What a socket was sent, and whether it was disconnected: all the subscriptions use of one. */
function fakeSocket(id: string) {
  const sent: Array<[string, unknown]> = [];
  const socket = {
    id,
    connected: true,
    disconnected: false,
    emit(event: string, payload: unknown) {
      sent.push([event, payload]);
      return true;
    },
    disconnect() {
      socket.disconnected = true;
      return socket;
    },
  };
  return { socket: socket as Subscriber, sent, state: socket };
}

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
const notes: Topic = {
  list: 'user',
  read: 'user',
  ownership: { field: 'owner' },
  presentTo: (record) => record,
  seesAll: () => true,
  shown: (record) => record,
};
const user = (id: string): Caller => ({ id, admin: false, via: 'accounts' });
const wait = (ms: number) => new Promise((done) => setTimeout(done, ms));
const created = (title: string) => ({
  topic: 'notes',
  action: 'created' as const,
  record: { id: title, title },
});

/**
 * The subscriptions with a `callerOf` the test steers: how long a check
 * takes, what it answers, and how many ran at once.
 */
function subscriptionsWith(recheckAfterMs: number) {
  const checks = {
    delay: 0,
    answer: (socket: Subscriber): Caller | null => user(socket.id),
    running: 0,
    most: 0,
    done: 0,
  };
  const subscriptions = createSubscriptions({
    topics: new Map([['notes', notes]]),
    authenticators: [],
    logger: quiet,
    recheckAfterMs,
    callerOf: async (socket) => {
      checks.running++;
      checks.most = Math.max(checks.most, checks.running);
      await wait(checks.delay);
      checks.running--;
      checks.done++;
      return checks.answer(socket);
    },
  });
  return { subscriptions, checks };
}

describe('subscribers are checked again in the background', () => {
  it('an event after the check period reaches the subscriber at once, while its slow check runs', async () => {
    const { subscriptions, checks } = subscriptionsWith(100);
    try {
      const ada = fakeSocket('ada');
      subscriptions.subscribe(ada.socket, 'notes', user('ada'));
      await wait(150); // past the period: a check is due
      checks.delay = 2_000; // the identity provider is slow now
      subscriptions.deliver(created('first'));
      // Delivered in the same turn: no check stands between the event and the socket.
      expect(ada.sent).toEqual([['notes:created', { id: 'first', title: 'first' }]]);
    } finally {
      subscriptions.close();
    }
  });

  it('a token revoked elsewhere is found by the background check: the socket is told and disconnected, with no event after', async () => {
    const { subscriptions, checks } = subscriptionsWith(100);
    try {
      const ada = fakeSocket('ada');
      subscriptions.subscribe(ada.socket, 'notes', user('ada'));
      checks.answer = () => null; // revoked on another instance, which this one was not told of
      const deadline = Date.now() + 2_000;
      while (!ada.state.disconnected && Date.now() < deadline) await wait(20);
      expect(ada.state.disconnected).toBe(true);
      expect(ada.sent).toEqual([[closingEvent, expect.objectContaining({ code: 401 })]]);
      subscriptions.deliver(created('after'));
      expect(ada.sent).toHaveLength(1);
    } finally {
      subscriptions.close();
    }
  });

  it('many subscribers due at once are all checked, a few at a time', async () => {
    const { subscriptions, checks } = subscriptionsWith(200);
    try {
      checks.delay = 5;
      const sockets = Array.from({ length: 100 }, (_, i) => fakeSocket(`user${i}`));
      for (const { socket } of sockets) subscriptions.subscribe(socket, 'notes', user(socket.id));
      const deadline = Date.now() + 5_000;
      while (checks.done < 100 && Date.now() < deadline) await wait(20);
      expect(checks.done).toBeGreaterThanOrEqual(100);
      expect(checks.most).toBeLessThanOrEqual(8);
      subscriptions.deliver(created('all'));
      for (const { sent } of sockets) expect(sent).toEqual([['notes:created', { id: 'all', title: 'all' }]]);
    } finally {
      subscriptions.close();
    }
  });
});

describe('an event to many subscribers', () => {
  it('is presented once for those who see the record whole and once for the others, each group sent in one broadcast', async () => {
    const sent: Array<{ to: string[]; topic: string; event: string; args: unknown[] }> = [];
    const profiles: Topic = {
      list: 'user',
      read: 'user',
      ownership: { field: 'owner' },
      presentTo: (record, caller) =>
        caller?.admin || record.owner === caller?.id ? record : { ...record, phone: undefined },
      seesAll: (record, caller) => caller?.admin === true || record.owner === caller?.id,
      shown: (record, whole) => (whole ? record : { id: record.id, owner: record.owner }),
    };
    const subscriptions = createSubscriptions({
      topics: new Map([['profiles', profiles]]),
      authenticators: [],
      logger: quiet,
      callerOf: async (socket) => user(socket.id),
      broadcast: (sockets, topic, event, ...args) =>
        sent.push({ to: sockets.map((socket) => socket.id), topic, event, args }),
    });
    try {
      const sockets = ['ada', 'bob', 'cy', 'admin'].map((id) => fakeSocket(id));
      for (const { socket } of sockets)
        subscriptions.subscribe(
          socket,
          'profiles',
          socket.id === 'admin' ? { id: 'admin', admin: true, via: 'admin-token' } : user(socket.id),
        );
      subscriptions.deliver({
        topic: 'profiles',
        action: 'created',
        record: { id: 'p1', owner: 'ada', phone: '555' } as ChangeEvent['record'],
        seq: 7,
      });
      expect(sent).toEqual([
        {
          to: ['ada', 'admin'],
          topic: 'profiles',
          event: 'profiles:created',
          args: [{ id: 'p1', owner: 'ada', phone: '555' }, { seq: 7 }],
        },
        {
          to: ['bob', 'cy'],
          topic: 'profiles',
          event: 'profiles:created',
          args: [{ id: 'p1', owner: 'ada' }, { seq: 7 }],
        },
      ]);
      // One socket alone in its group is sent its own.
      subscriptions.unsubscribe(sockets[3]!.socket, 'profiles');
      sent.length = 0;
      subscriptions.deliver({
        topic: 'profiles',
        action: 'updated',
        record: { id: 'p1', owner: 'ada', phone: '556' } as ChangeEvent['record'],
        seq: 8,
      });
      expect(sockets[0]!.sent).toEqual([['profiles:updated', { id: 'p1', owner: 'ada', phone: '556' }]]);
      expect(sent).toEqual([
        {
          to: ['bob', 'cy'],
          topic: 'profiles',
          event: 'profiles:updated',
          args: [{ id: 'p1', owner: 'ada' }, { seq: 8 }],
        },
      ]);
    } finally {
      subscriptions.close();
    }
  });
});

describe('a check that began before its caller changed', () => {
  it('is not taken: the caller as it is now decides what the subscriber gets', async () => {
    // Who the token is, as the database says when a check asks: the admin role at first.
    let role = 'admin';
    let delay = 0;
    const drafts: Topic = {
      list: 'user',
      read: (caller, record) => record?.draft !== true || caller?.role === 'admin',
      ownership: { field: 'owner' },
      presentTo: (record) => record,
      seesAll: () => true,
      shown: (record) => record,
    };
    const subscriptions = createSubscriptions({
      topics: new Map([
        ['posts', drafts],
        ['users', drafts],
      ]),
      authenticators: [
        {
          name: 'accounts',
          authenticate: async () => undefined,
          affectedBy: (event: ChangeEvent) => event.topic === 'users',
        } as unknown as Authenticator,
      ],
      logger: quiet,
      recheckAfterMs: 100,
      callerOf: async (socket) => {
        const seen = { ...user(socket.id), role };
        await wait(delay);
        return seen;
      },
    });
    try {
      const carol = fakeSocket('carol');
      subscriptions.subscribe(carol.socket, 'posts', { ...user('carol'), role: 'admin' });
      delay = 400; // the background check that comes due next reads the admin role, slowly
      await wait(150);
      // Her role is taken away meanwhile, and the change says so: she is checked again before her next event.
      role = 'member';
      delay = 0;
      subscriptions.deliver({ topic: 'users', action: 'updated', record: { id: 'carol' } });
      await wait(450); // the slow check has ended, with what it read before the change
      subscriptions.deliver({
        topic: 'posts',
        action: 'created',
        record: { id: 'p1', draft: true } as ChangeEvent['record'],
      });
      subscriptions.deliver({ topic: 'posts', action: 'created', record: { id: 'p2' } });
      await wait(20);
      expect(carol.sent.map(([event, record]) => `${event} ${(record as { id: string }).id}`)).toEqual([
        'posts:created p2',
      ]);
    } finally {
      subscriptions.close();
    }
  });
});
