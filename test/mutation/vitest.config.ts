import { defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs against each mutant (stryker.config.mjs): those that run the mutated
 * modules in their own process. End-to-end files whose runs go through runCli are included with
 * TAXPREP_TEST_IN_PROCESS=1, which makes runCli call the sources' `main` in process (a spawned
 * build holds no mutant); their tests that kill a process still spawn the build, and cannot kill a
 * mutant. test/e2e/crash-points.test.ts is left out: a crash point kills the process it is in.
 * The guarantees those tests prove are checked by the hand-made mutations of test/mutation/byHand.js.
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: [
      'test/batch/**/*.test.ts',
      'test/follow/**/*.test.ts',
      'test/cli/{batch-ledgers,documents-ledger,ledger,login-link-run,login-link-flags,login-link-pacer,login-link-input,paced-pages,docs-sync-plan,docs-sync-run,docs-sync-edges,commands-flags}.test.ts',
      'test/mock/{store,journal,storageFull,accounts,documents,loginLinks,controls,clock}.test.ts',
      'test/e2e/{docs-sync,accounts-import,follow}.test.ts',
    ],
    env: { TAXPREP_TEST_IN_PROCESS: '1' },
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
