import type { TestProject } from 'vitest/node';
import {
  MissingBinaries,
  serverBinaries,
  startPostgres,
  startRedis,
  type ServerBinaries,
} from '../helpers/local-servers.js';

/**
 * Once per `vitest run`: a private PostgreSQL (database `test`) and a private
 * Redis, started together from the machine's binaries on free ports, handed
 * to the tests with `provide` (tests read them with `inject('postgresUrl')`
 * and `inject('redisUrl')`), stopped and removed when the run ends. The
 * machine's own PostgreSQL and Redis are never used. A missing binary fails
 * the run with one line naming the Debian package to install.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://postgres@127.0.0.1:<port>/test; each test takes a fresh schema (helpers/postgres.ts). */
    postgresUrl: string;
    /** redis://127.0.0.1:<port> */
    redisUrl: string;
  }
}

interface Servers {
  postgresUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

/** The servers of this run, and how many groups (Vitest projects) use them: the last to end stops them. */
interface Shared {
  servers: Promise<Servers>;
  users: number;
}
const sharedKey = Symbol.for('berth.privateServices');
const holder = globalThis as { [sharedKey]?: Shared };

/**
 * Each group of the suite that needs them (vitest.config.ts) runs this: the
 * first starts the servers, the others are handed the same ones.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (holder[sharedKey] ??= { servers: startServers(), users: 0 });
  shared.users++;
  const { postgresUrl, redisUrl, stop } = await shared.servers;
  project.provide('postgresUrl', postgresUrl);
  project.provide('redisUrl', redisUrl);
  return async () => {
    if (--shared.users > 0) return;
    delete holder[sharedKey];
    await stop();
  };
}

async function startServers(): Promise<Servers> {
  let binaries: ServerBinaries;
  try {
    binaries = serverBinaries();
  } catch (error) {
    if (!(error instanceof MissingBinaries)) throw error;
    // Thrown, vitest would first claim "No test files found"; this is the whole story, in one line.
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  // Should the run end without the teardown below (a crash), the servers go with it.
  const removeNow: Array<() => void> = [];
  const onExit = () => removeNow.forEach((remove) => remove());
  process.once('exit', onExit);
  const [postgres, redis] = await Promise.allSettled([
    startPostgres({ binaries, databases: ['test'] }).then((server) => {
      removeNow.push(server.removeNow);
      return server;
    }),
    startRedis(binaries).then((server) => {
      removeNow.push(server.stopNow);
      return server;
    }),
  ]);
  if (postgres.status === 'rejected' || redis.status === 'rejected') {
    onExit();
    process.off('exit', onExit);
    throw postgres.status === 'rejected' ? postgres.reason : (redis as PromiseRejectedResult).reason;
  }
  return {
    postgresUrl: postgres.value.url('test'),
    redisUrl: redis.value.url,
    async stop() {
      await Promise.all([postgres.value.remove(), redis.value.stop()]);
      process.off('exit', onExit);
    },
  };
}
