import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/setup/summary-reporter.js';

export default defineConfig({
  test: {
    globalSetup: ['./test/setup/global-setup.ts'],
    include: ['test/**/*.test.ts', 'client-sdk/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // The default report, then one closing line `N passed, N failed[, N skipped]` that CI reads.
    reporters: ['default', new SummaryReporter()],
  },
});
