import { createBerthApp } from '../berth-app.js';
import { addNewCommand } from './new-command.js';
import { runCli } from './run-cli.js';

/** The `berth` binary. */
await runCli(createBerthApp(), { extend: addNewCommand });
