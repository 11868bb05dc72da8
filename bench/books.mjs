// GET /books and GET /books/:id served by Berth, Fastify and raw node:http,
// all reading the same SQLite file with the same driver and query. Servers
// are pinned to CPU 0, wrk to CPU 1, rounds interleaved.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, load, median, startPinned, table } from './lib.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);

export async function benchBooks() {
  const cwd = mkdtempSync(join(tmpdir(), 'berth-bench-'));
  try {
    const db = join(cwd, 'data', 'berth.sqlite');
    const env = { BERTH_MODE: 'release', BERTH_ADMIN_TOKEN: 'bench-token-0123456789', BENCH_DB: db };
    const servers = {
      berth: [join(root, 'bin', 'berth'), ['start']],
      fastify: [join(root, 'bench', 'servers', 'fastify.mjs'), []],
      raw: [join(root, 'bench', 'servers', 'raw.mjs'), []],
    };
    // One Berth start creates and seeds the database the others read.
    const seedPort = await freePort();
    const seeder = await startPinned(0, servers.berth[0], ['start'], { ...env, PORT: String(seedPort) }, cwd);
    const page = await (await fetch(`http://127.0.0.1:${seedPort}/books?limit=1`)).json();
    await seeder.stop();
    const id = page.items[0].id;
    const endpoints = { 'GET /books': '/books', 'GET /books/:id': `/books/${id}` };

    const results = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [name, [script, args]] of Object.entries(servers)) {
        const port = await freePort();
        const server = await startPinned(0, script, args, { ...env, PORT: String(port) }, cwd);
        try {
          for (const [endpoint, path] of Object.entries(endpoints)) {
            const url = `http://127.0.0.1:${port}${path}`;
            await load(url, server.pid, { seconds: 1 }); // warm-up
            const result = await load(url, server.pid, { seconds });
            ((results[endpoint] ??= {})[name] ??= []).push(result);
            process.stderr.write(`round ${round} ${name} ${endpoint}: ${result.rps.toFixed(0)} req/s\n`);
          }
        } finally {
          await server.stop();
        }
      }
    }

    console.log(
      `\nHTTP: books from SQLite (server on 1 core, wrk -c50 on the other, median of ${rounds} rounds of ${seconds}s)\n`,
    );
    const rows = [['endpoint', 'server', 'req/s', 'CPU µs/req', 'CPU vs fastify', 'CPU vs raw']];
    for (const [endpoint, byServer] of Object.entries(results)) {
      const cpu = (name) => median(byServer[name].map((r) => r.cpuPerRequest));
      for (const name of Object.keys(servers)) {
        rows.push([
          endpoint,
          name,
          median(byServer[name].map((r) => r.rps)).toFixed(0),
          cpu(name).toFixed(1),
          `${(cpu(name) / cpu('fastify')).toFixed(2)}×`,
          `${(cpu(name) / cpu('raw')).toFixed(2)}×`,
        ]);
      }
    }
    table(rows);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
