#!/usr/bin/env node
// `npm run mutate:by-hand [-- <name>...] [--runs N]`: the mutations of issue 26 that only an
// end-to-end test can see (a kill between two steps of a tracked write), each applied to the
// sources, built, and run against the deterministic crash-point tests (test/e2e/crash-points.test.ts)
// N times (10 by default). Each must fail every run. The file is restored and rebuilt afterwards,
// whatever happens. Stryker cannot make these: a spawned CLI runs the build, which holds no mutant.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Each mutation: the file, the text replaced and its replacement, and which tests must catch it. */
export const MUTATIONS = [
  {
    name: 'from-no-holdback',
    what: 'login-link --from resumes without holding back uncertain intents',
    file: 'src/commands/login-link/create.ts',
    from: "      else if (unfinished && uncertain && !options.reissueUncertain) plan.settled.push({ kind: 'failed', item, error: uncertainError(item, uncertain.at) });\n",
    to: '',
    tests: 'login-link --from',
  },
  {
    name: 'intent-after-request',
    what: 'the intent written after the request instead of before',
    file: 'src/batch/send.ts',
    from: "    intent = await write.recordIntent();\n    crashPoint('batch.after-intent');\n    try {\n      response = await write.send();\n    } catch (error) {\n      if",
    to: "    try {\n      response = await write.send();\n      intent = await write.recordIntent();\n      crashPoint('batch.after-intent');\n    } catch (error) {\n      intent = await write.recordIntent();\n      if",
    tests: '',
  },
  {
    name: 'sync-no-landed-record',
    what: 'docs sync skips recording an upload an interrupted run stored',
    file: 'src/commands/docs/sync.ts',
    from: '      if (decision.landed === undefined) continue;',
    to: '      continue;',
    tests: 'docs sync',
  },
  {
    name: 'import-no-created-line',
    what: "accounts import never records the account it created (a re-run sends every row again)",
    file: 'src/commands/accounts/import.ts',
    from: '              if (accountId !== null) await ledger.recordAccount(',
    to: '              if (accountId === -1) await ledger.recordAccount(',
    tests: 'accounts import',
  },
];

const build = () => execFileSync(process.execPath, ['bin/build.js'], { cwd: root, stdio: 'ignore' });

function runTests(filter) {
  const args = ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/vitest.config.ts', 'test/e2e/crash-points.test.ts', ...(filter ? ['-t', filter] : [])];
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const failed = [...new Set((result.stdout + result.stderr).match(/FAIL .*/g) ?? [])].map((line) => line.replace(/^FAIL\s+test\/e2e\/crash-points\.test\.ts > /, ''));
  return { passed: result.status === 0, failed };
}

const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const runs = runsAt === -1 ? 10 : Number(argv[runsAt + 1]);
const names = argv.filter((arg, index) => !arg.startsWith('--') && index !== runsAt + 1);
const chosen = names.length === 0 ? MUTATIONS : MUTATIONS.filter((mutation) => names.includes(mutation.name));
let survived = 0;
for (const mutation of chosen) {
  const path = `${root}${mutation.file}`;
  const original = readFileSync(path, 'utf8');
  if (!original.includes(mutation.from)) throw new Error(`${mutation.name}: the text to mutate is no longer in ${mutation.file}`);
  let caught = 0;
  const killers = new Set();
  try {
    writeFileSync(path, original.replace(mutation.from, mutation.to));
    build();
    for (let run = 1; run <= runs; run += 1) {
      const { passed, failed } = runTests(mutation.tests);
      if (!passed) caught += 1;
      for (const test of failed) killers.add(test);
    }
  } finally {
    writeFileSync(path, original);
    build();
  }
  if (caught < runs) survived += 1;
  process.stdout.write(`${caught === runs ? '✓' : '✗'} ${mutation.name} (${mutation.what}): failed ${caught} of ${runs} runs\n${[...killers].map((test) => `    ${test}`).join('\n')}\n`);
}
process.exit(survived > 0 ? 1 : 0);
