// `npm run bench`: runs every bench/*.bench.js in turn (each starts what it needs and prints its
// own table of ratios), after a fresh build so the numbers are for the code in the tree.
// Optional arguments filter by name: `npm run bench -- startup`.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const filters = process.argv.slice(2);
const benches = readdirSync(benchDir)
  .filter((name) => name.endsWith('.bench.js'))
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort();

execFileSync(process.execPath, [fileURLToPath(new URL('../bin/build.js', import.meta.url))], { stdio: 'inherit' });
let failed = 0;
for (const name of benches) {
  process.stdout.write(`\n## ${name}\n`);
  try {
    execFileSync(process.execPath, [benchDir + name], { stdio: 'inherit' });
  } catch {
    failed += 1;
    process.stderr.write(`${name} failed\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
