import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Unit tests of pure modules sit beside them (src/**/*.test.ts); flows and whole services in test/.
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Tests run the current sources also where they load dist/ (worker threads, bin/rpcctl.js).
    globalSetup: ['test/global-setup.ts'],
    // `default` keeps vitest's own closing lines (CI reads them); the second adds one line
    // counting the parts skipped for a missing PostgreSQL, Redis or tool, by reason.
    reporters: ['default', './test/helpers/skips-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time even on a 2-core machine (vitest's default there is one): most suites
    // wait on processes, nodes and sockets rather than compute, so a second file overlaps those
    // waits; CI's fresh-clone run went from 2,125 s to 1,866 s of `npm test` under load.
    maxWorkers: 2,
  },
});
