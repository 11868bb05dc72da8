import { createRequire } from 'node:module';
import { dirname } from 'node:path';

// Found by the package's own name, not by counting folders up from this
// file: the sources (src/), the compiled files (dist/) and the `berth`
// command's bundle (dist/bundle) sit at different depths below it.
const require = createRequire(import.meta.url);
const manifest = require.resolve('berth/package.json');

/** The directory Berth is installed in: its UI and playground builds, and what new projects depend on. */
export const berthRoot = dirname(manifest);

/** Berth's own version, from its package.json. */
export const berthVersion: string = (require(manifest) as { version: string }).version;
