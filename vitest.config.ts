import { defineConfig } from 'vitest/config';
import { aloneTestFiles, unitTestFiles } from './vitest.tiers.js';

const unit = unitTestFiles();
const alone = aloneTestFiles;
/** Private PostgreSQL and Redis servers for the groups that need them, started once (see the file). */
const privateServices = ['test/setup/private-services.global.ts'];

/**
 * The whole suite, in three groups one after the other: first the unit tier
 * (vitest.tiers.ts), four files at a time, as `npm run test:unit` runs it;
 * then the files that start databases, browsers or processes of their own,
 * two at a time; then those that time what they start, load both cores or
 * rebuild the checkout (`aloneTestFiles`), one at a time.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A wait that is not given its own limit: it ends as soon as it holds, and a file beside another may need
    // more than vitest's 1 s.
    expect: { poll: { timeout: 5000 } },
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
          exclude: [...unit, ...alone],
          globalSetup: privateServices,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: alone,
          globalSetup: privateServices,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
