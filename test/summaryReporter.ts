import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with the plain `Tests: N passed, N failed` line that CI reads (it does not parse
 * vitest's own summary); vitest's default reporter still prints everything else.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === 'passed' || state === 'failed' || state === 'skipped') counts[state] += 1;
      }
    }
    const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : '';
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed${skipped}\n`);
  }
}
