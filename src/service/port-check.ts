import { createServer } from 'node:net';
import { ServiceError } from './service-error.js';

/**
 * Fails before anything is written when the service could not listen where
 * its settings say: the port is held by another program, needs privileges,
 * or the host is not an address of this machine.
 *
 * @example
 * await checkPortFree(4500, undefined, 'PORT in .env')
 */
export async function checkPortFree(port: number, host: string | undefined, source: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((done, fail) => {
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        fail(
          new ServiceError(
            `port ${port} (from ${source}) is already in use, so the service could not serve: stop the program using it or choose another port`,
          ),
        );
      } else if (error.code === 'EACCES') {
        fail(
          new ServiceError(
            `port ${port} (from ${source}) needs privileges: choose a port above 1023, or load a system service with sudo`,
          ),
        );
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        fail(new ServiceError(`cannot listen on host "${host}": it is not an address of this machine`));
      } else {
        fail(new ServiceError(`cannot listen on port ${port} (from ${source}): ${error.message}`));
      }
    });
    probe.listen(port, host, () => probe.close(() => done()));
  });
}
