import { defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs against each mutant (stryker.config.mjs): those that run the mutated
 * modules in their own process. The end-to-end tests spawn the built CLI, which holds no mutant,
 * so they could never kill one; the guarantees they prove are checked by hand-made mutations
 * instead (test/mutation/README.md).
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: [
      'test/batch/**/*.test.ts',
      'test/follow/**/*.test.ts',
      'test/cli/{batch-ledgers,documents-ledger,ledger,login-link-run,login-link-flags,login-link-pacer,login-link-input,paced-pages,docs-sync-plan,docs-sync-run}.test.ts',
      'test/mock/{store,crash,storageFull,accounts,documents,loginLinks,controls,clock}.test.ts',
    ],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
