import { defineConfig } from 'vitest/config';
import SummaryLineReporter from './summaryReporter.ts';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default', new SummaryLineReporter()],
  },
});
