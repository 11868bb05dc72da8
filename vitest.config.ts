import { defineConfig } from 'vitest/config';
import { unitTestFiles } from './vitest.tiers.js';

const unit = unitTestFiles();

/**
 * The whole suite, in two groups one after the other: first the unit tier
 * (vitest.tiers.ts), four files at a time, as `npm run test:unit` runs it;
 * then the files that start databases, browsers, systemd, benchmarks or
 * package installs, one at a time: many of them load the machine, or time
 * what they start.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: unit,
          maxWorkers: 4,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'services',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: unit,
          // Private PostgreSQL and Redis servers for the whole run (see the file).
          globalSetup: ['test/setup/private-services.global.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
