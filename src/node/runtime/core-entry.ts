/**
 * `berth/core` on Node.js: the runtime-free core, with `app.request` answered
 * by the Node test runtime (SQLite in memory), as from `berth`. Package
 * export conditions pick this file on Node only; elsewhere `berth/core` is
 * `src/core/index.ts` itself.
 */
import { setTestRuntime } from '../../core/internal.js';
import { nodeTestRuntime } from './test-runtime.js';

setTestRuntime(nodeTestRuntime);

export * from '../../core/index.js';
