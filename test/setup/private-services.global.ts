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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
  project.provide('postgresUrl', postgres.value.url('test'));
  project.provide('redisUrl', redis.value.url);
  return async () => {
    await Promise.all([postgres.value.remove(), redis.value.stop()]);
    process.off('exit', onExit);
  };
}
