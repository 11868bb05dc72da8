import { createBerthApp } from '../berth-app.js';
import { addNewCommand } from './new-command.js';
import { runCli } from './run-cli.js';

/**
 * The `berth` binary. Bundled as CommonJS (no top-level await), so bin/berth
 * can load it with its compiled code kept between runs (node/runtime/compile-cache.ts).
 */
void runCli(createBerthApp(), { extend: addNewCommand });
