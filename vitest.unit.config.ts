import { defineConfig } from 'vitest/config';
import { unitTestFiles } from './vitest.tiers.js';

/** `npm run test:unit`: the unit tier alone (see vitest.tiers.ts); no global setup runs: nothing is started. */
export default defineConfig({
  test: {
    include: unitTestFiles(),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // As in vitest.config.ts: a wait without its own limit may take more than vitest's 1 s beside other files.
    expect: { poll: { timeout: 5000 } },
    pool: 'forks',
    // Most of these tests wait on the processes they start: four at a time on 2 cores took 41 s, two took 97 s.
    maxWorkers: 4,
  },
});
