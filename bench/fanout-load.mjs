// Load generator of the fan-out benchmark (bench/fanout.mjs runs it pinned to CPU 1): opens `clients`
// connections to one server (socket.io or Berth's events WebSocket subscribed to books, or plain WebSockets), reads the server's RSS
// with none and with all of them idle, then POSTs books one at a time on a fixed beat and times each until
// the last client has it; optionally waits `quietSeconds` without a write and times one write more; last, with
// `snapshots` (the server's directory), its live heap with all of them and with none once they have gone.
// Takes its plan as JSON in argv[2]; prints what it measured as JSON.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { io } from 'socket.io-client';
import WebSocket from 'ws';
import { cpuMicros } from './lib.mjs';

const plan = JSON.parse(process.argv[2]);
const { url, pid, transport, clients: count, batch = 100 } = plan;
const sleep = (ms) => new Promise((resume) => setTimeout(resume, ms));

/** The server's resident memory, in KB. */
const rssKb = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

/**
 * The server's live JavaScript heap, in KB: a heap snapshot it writes on SIGUSR2 into `plan.snapshots`
 * (V8 collects the garbage first), its objects' sizes summed. RSS right after many connections also holds the
 * garbage their setup left, which V8 gives back later or never, as its heap's policy goes.
 */
async function heapKb() {
  const before = new Set(readdirSync(plan.snapshots));
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 60_000; waited += 250) {
    await sleep(250);
    const file = readdirSync(plan.snapshots).find(
      (name) => name.endsWith('.heapsnapshot') && !before.has(name),
    );
    if (!file) continue;
    const path = join(plan.snapshots, file);
    // Written in one go by the server: read once its size holds still.
    let size = -1;
    while (size !== statSync(path).size) {
      size = statSync(path).size;
      await sleep(250);
    }
    let snapshot;
    try {
      snapshot = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      continue; // not whole yet
    }
    rmSync(path);
    const { node_fields: fields } = snapshot.snapshot.meta;
    const width = fields.length;
    const at = fields.indexOf('self_size');
    let total = 0;
    for (let i = at; i < snapshot.nodes.length; i += width) total += snapshot.nodes[i];
    return total / 1024;
  }
  throw new Error(`the server (pid ${pid}) wrote no heap snapshot in ${plan.snapshots}`);
}

// Each write's arrivals: which clients have it, how many, when the first and the last did.
const writes = new Map();
let repeated = 0;
let dropped = 0;
const arrived = (client, title) => {
  const write = writes.get(title);
  if (!write) return;
  if (write.seen[client]) {
    repeated++;
    return;
  }
  write.seen[client] = 1;
  const now = performance.now();
  write.first ??= now;
  if (++write.count === write.of) {
    write.last = now;
    write.done();
  }
};

let closing = false;
/** One client; `index` names it in the arrivals. Resolves once connected (and subscribed). */
function open(index) {
  if (transport === 'socket.io')
    return new Promise((done, fail) => {
      const socket = io(url, {
        transports: ['websocket'],
        reconnection: false,
        forceNew: true,
        ...(plan.token ? { auth: { token: plan.token } } : {}),
      });
      socket.on('books:created', (book) => arrived(index, book.title));
      socket.on('disconnect', () => closing || dropped++);
      socket.once('connect_error', fail);
      socket.once('connect', async () => {
        const ack = await socket.emitWithAck('subscribe', 'books');
        if (ack.ok) done({ close: () => socket.disconnect() });
        else fail(new Error(`subscribe refused: ${JSON.stringify(ack)}`));
      });
    });
  if (transport === 'events')
    return new Promise((done, fail) => {
      const socket = new WebSocket(`${url.replace('http', 'ws')}/socket.io/events`, {
        ...(plan.token ? { headers: { authorization: `Bearer ${plan.token}` } } : {}),
      });
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data));
        if (frame.event === 'books:created') return arrived(index, frame.data[0].title);
        if (frame.id !== 1) return;
        if (frame.ack.ok) done({ close: () => socket.close() });
        else fail(new Error(`subscribe refused: ${JSON.stringify(frame.ack)}`));
      });
      socket.on('close', () => closing || dropped++);
      socket.once('error', fail);
      socket.once('open', () => socket.send(JSON.stringify({ event: 'subscribe', data: 'books', id: 1 })));
    });
  return new Promise((done, fail) => {
    const socket = new WebSocket(`${url.replace('http', 'ws')}${plan.path ?? '/'}`);
    socket.on('message', (data) => {
      if (plan.writes) arrived(index, JSON.parse(String(data))[1].title);
    });
    socket.on('close', () => closing || dropped++);
    socket.once('error', fail);
    socket.once('open', () => done({ close: () => socket.close() }));
  });
}

/** Opens `total` clients, `batch` at a time. */
async function openAll(total, first = 0) {
  const opened = [];
  for (let i = 0; i < total; i += batch)
    opened.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(batch, total - i) }, (_, j) => open(first + i + j)),
      )),
    );
  return opened;
}

/** Posts one book; answers its write, whose `delivered` resolves when `of` clients have it (or after `waitMs`). */
async function post(title, of, waitMs = 10_000) {
  const write = { seen: new Uint8Array(of), count: 0, of, first: undefined, last: undefined };
  const delivered = new Promise((done) => {
    write.done = done;
    setTimeout(done, waitMs).unref();
  });
  writes.set(title, write);
  write.sent = performance.now();
  const response = await fetch(`${url}/books`, {
    method: 'POST',
    headers: { authorization: `Bearer ${plan.writeToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title, author: 'Bench Fanout', year: 2001 }),
  });
  if (response.status !== 201) throw new Error(`POST /books answered ${response.status}`);
  await response.arrayBuffer();
  return { write, delivered };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** `total` writes, one every `intervalMs`, each awaited by all `of` clients; times to the last, lost, CPU. */
async function writeEvery(prefix, total, of, intervalMs) {
  const before = cpuMicros(pid);
  const started = performance.now();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const wait = started + i * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(await post(`${prefix} ${i}`, of));
  }
  await Promise.all(pending.map((each) => each.delivered));
  const cpu = cpuMicros(pid) - before;
  const done = pending.map((each) => each.write);
  const times = done.filter((write) => write.last !== undefined).map((write) => write.last - write.sent);
  return {
    times,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    lost: done.reduce((sum, write) => sum + (write.of - write.count), 0),
    cpuPerDelivery: cpu / (total * of),
  };
}

const result = {};
// How long the server is left to settle before each memory figure (the test mode's is shorter).
const settleMs = plan.settleMs ?? 2000;
// Warm-up: the server loads its realtime code, its JIT sees a few connections and writes.
const warm = await openAll(Math.min(50, count), 0);
if (plan.writes) await writeEvery('warm-up', 5, warm.length, 100);
closing = true;
for (const each of warm) each.close();
await sleep(settleMs);
closing = false;
result.rssIdleKb = rssKb();
const opened = await openAll(count, 0);
await sleep(settleMs);
result.rssConnectedKb = rssKb();
if (plan.writes) {
  await writeEvery('warm', plan.warmWrites ?? 5, count, plan.intervalMs ?? 100);
  const measured = await writeEvery('write', plan.writes, count, plan.intervalMs ?? 100);
  delete measured.times;
  result.fanout = measured;
}
if (plan.quietSeconds) {
  await sleep(plan.quietSeconds * 1000);
  const { write, delivered } = await post('after the quiet', count, 30_000);
  await delivered;
  result.quiet = {
    first: write.first === undefined ? undefined : write.first - write.sent,
    last: write.last === undefined ? undefined : write.last - write.sent,
    lost: write.of - write.count,
  };
}
result.repeated = repeated;
result.dropped = dropped;
// The live heap with every client, then with none once they have gone (the same server, code and data
// otherwise): last, so that a snapshot's pause and memory touch none of the figures above.
if (plan.snapshots) result.heapConnectedKb = await heapKb();
closing = true;
for (const each of opened) each.close();
await sleep(plan.snapshots ? settleMs * 1.5 : 200);
if (plan.snapshots) result.heapIdleKb = await heapKb();
console.log(JSON.stringify(result));
process.exit(0);
