// Mutation testing of the durability mechanism (issue 26): `npm run mutate` (test/mutation/run.js),
// never part of `npm test`. StrykerJS 9.x: 10.x needs Node 22, and the floor is Node 20.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: [
    'src/batch/**/*.ts',
    'src/follow/**/*.ts',
    'src/mock/store.ts',
    'src/mock/persistence.ts',
    'src/commands/login-link/create.ts',
    'src/commands/docs/sync.ts',
  ],
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // The in-process tests only (test/mutation/vitest.config.ts): a spawned CLI runs dist/, which holds no mutant.
  // Not vitest's `related`: the CLI's commands are imported lazily, which its import graph misses; coverage per test narrows instead.
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  // Each mutant runs only the tests that reached it.
  coverageAnalysis: 'perTest',
  // Two cores shared with everything else on the machine.
  concurrency: 2,
  // A mutant of module-level code would need every test run again per mutant; such mutants are listed as ignored.
  ignoreStatic: true,
  // Runs again reuse the results of unchanged code and tests. The file is committed: without it a
  // run tests every mutant again, hours on a shared two-core machine; with it, only those whose code
  // or covering tests changed (a stale entry is tested again, never trusted). `-- --force` ignores it.
  incremental: true,
  incrementalFile: 'test/mutation/stryker-incremental.json',
  timeoutMS: 20_000,
  reporters: ['progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
