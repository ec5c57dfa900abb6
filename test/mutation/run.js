#!/usr/bin/env node
// `npm run mutate [-- <stryker flags>]`: runs StrykerJS (stryker.config.mjs, incremental), then
// prints the mutation score of each mutated file with the equivalent mutants of
// test/mutation/equivalent.json left out, and lists those with their reasons. Exits 1 when a file
// scores below TARGET, or an entry of equivalent.json matches no mutant any more (stale).
// Flags after `--` go to `stryker run`: `npm run mutate -- --mutate src/batch/send.ts`.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TARGET = 85;
const REPORT = `${root}reports/mutation/mutation.json`;

/** An equivalent mutant: a change no test can tell apart, because no behaviour differs. */
const equivalents = JSON.parse(readFileSync(new URL('./equivalent.json', import.meta.url), 'utf8')).mutants;

const started = Date.now();
const stryker = spawnSync(process.execPath, [`${root}node_modules/@stryker-mutator/core/bin/stryker.js`, 'run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
const seconds = Math.round((Date.now() - started) / 1000);
if (stryker.status !== 0) {
  process.stderr.write(`stryker failed (exit ${stryker.status ?? stryker.signal})\n`);
  process.exit(stryker.status ?? 1);
}

const report = JSON.parse(readFileSync(REPORT, 'utf8'));
/** The source a mutant replaced, the key an equivalent.json entry is matched by (line numbers move). */
const originalOf = (source, location) => {
  const lines = source.split('\n');
  const { start, end } = location;
  if (start.line === end.line) return lines[start.line - 1].slice(start.column - 1, end.column - 1);
  return [lines[start.line - 1].slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1].slice(0, end.column - 1)].join('\n');
};
const matches = (entry, file, mutant, original) => entry.file === file && entry.mutator === mutant.mutatorName && entry.original === original && entry.replacement === mutant.replacement;

const used = new Set();
const rows = [];
const listed = [];
let below = 0;
for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  const count = { killed: 0, survived: 0, noCoverage: 0, equivalent: 0, ignored: 0, errors: 0 };
  const survivors = [];
  for (const mutant of mutants) {
    const original = originalOf(source, mutant.location);
    if (mutant.status === 'Killed' || mutant.status === 'Timeout') count.killed += 1;
    else if (mutant.status === 'Ignored') count.ignored += 1;
    else if (mutant.status === 'CompileError' || mutant.status === 'RuntimeError') count.errors += 1;
    else {
      const entry = equivalents.find((candidate) => matches(candidate, file, mutant, original));
      if (entry !== undefined) {
        used.add(entry);
        count.equivalent += 1;
        listed.push(`  ${file}:${mutant.location.start.line} ${mutant.mutatorName} ${JSON.stringify(original)} -> ${JSON.stringify(mutant.replacement)}: ${entry.reason}`);
      } else {
        count[mutant.status === 'NoCoverage' ? 'noCoverage' : 'survived'] += 1;
        survivors.push(`    ${mutant.status} line ${mutant.location.start.line} ${mutant.mutatorName}: ${JSON.stringify(original).slice(0, 80)} -> ${JSON.stringify(mutant.replacement ?? '').slice(0, 80)}`);
      }
    }
  }
  const scored = count.killed + count.survived + count.noCoverage;
  const score = scored === 0 ? 100 : (100 * count.killed) / scored;
  if (score < TARGET) below += 1;
  rows.push({ file, score, count, survivors });
}

const width = Math.max(...rows.map((row) => row.file.length));
process.stdout.write(`\nmutation score per file (killed / (killed + survived + no coverage); equivalents left out; target ${TARGET}%):\n`);
for (const { file, score, count, survivors } of rows) {
  process.stdout.write(
    `${score < TARGET ? '✗' : '✓'} ${file.padEnd(width)}  ${score.toFixed(1).padStart(5)}%  killed ${count.killed}, survived ${count.survived}, no coverage ${count.noCoverage}, equivalent ${count.equivalent}, ignored (static) ${count.ignored}, errors ${count.errors}\n`,
  );
  // Every survivor without a reason is listed, not only those of files below the target: each needs a test or a reason.
  if (survivors.length > 0) process.stdout.write(`${survivors.join('\n')}\n`);
}
process.stdout.write(`\nequivalent mutants (test/mutation/equivalent.json), ${listed.length}:\n${listed.join('\n') || '  none'}\n`);
const stale = equivalents.filter((entry) => !used.has(entry) && Object.keys(report.files).includes(entry.file));
if (stale.length > 0) process.stdout.write(`\nstale entries of equivalent.json (no such mutant survives any more): ${stale.map((entry) => `${entry.file} ${entry.mutator} ${JSON.stringify(entry.original)}`).join('; ')}\n`);
process.stdout.write(`\n${rows.length} files in ${seconds} s; ${below} below ${TARGET}%\n`);
process.exit(below > 0 || stale.length > 0 ? 1 : 0);
