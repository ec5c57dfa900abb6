// Coded answers: peak RSS of `taxprep accounts get 1 --json` reading a 6 MB answer sent plain and
// sent gzip-coded (about 6 KB on the wire), and reading a brotli answer of under 1 KB that inflates
// to 100 MB (stopped at the default 8 MB --max-response-size, exit 12), beside `node -e 0` in the same
// run. Targets: the coded answer costs about what the plain one does (decoding streams; nothing but
// the decoded text is held), and the 100 MB one no more than the plain one (the cap counts decoded
// bytes: taxprep never holds more than the cap). Peak RSS from GNU time (`/usr/bin/time -f %M`).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const KEY = 'live_benchCodedAnswers00000001';
const TIME = '/usr/bin/time';
const RUNS = 3;
const bin = fileURLToPath(new URL('../bin/taxprep.cjs', import.meta.url));

const account = Buffer.from(JSON.stringify({ id: 1, email: 'big@example.com', status: 'active', notes: 'n'.repeat(6 * 1024 * 1024) }));
const answers = {
  plain: { body: account, headers: {} },
  gzip: { body: gzipSync(account), headers: { 'content-encoding': 'gzip' } },
  bomb: {
    body: brotliCompressSync(Buffer.alloc(100 * 1024 * 1024, '0'), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }),
    headers: { 'content-encoding': 'br' },
  },
};

/** Runs a command under GNU time; resolves with its peak RSS in MB, checking its exit code. */
async function peakRss(workDir, name, command, expectedExit, env = {}) {
  const report = join(workDir, `${name}.time`);
  const child = spawn(TIME, ['-f', '%M', '-o', report, ...command], { env: { PATH: process.env.PATH, HOME: workDir, ...env }, stdio: ['ignore', 'ignore', 'ignore'] });
  const [exitCode] = await once(child, 'exit');
  if (exitCode !== expectedExit) throw new Error(`${name} exited ${exitCode}, expected ${expectedExit}`);
  return Number(readFileSync(report, 'utf8').trim().split('\n').at(-1)) / 1024;
}

/** The median of `RUNS` measurements: the machine is shared and noisy. */
async function median(measure) {
  const values = [];
  for (let run = 0; run < RUNS; run += 1) values.push(await measure(run));
  return values.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
}

if (!existsSync(TIME)) {
  process.stdout.write(`skipped: ${TIME} (GNU time) is not installed\n`);
} else {
  const server = createServer((request, response) => {
    const answer = answers[request.url.split('/')[1]];
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(answer.body.length), ...answer.headers });
    response.end(answer.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${server.address().port}`;
  const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-coded-'));
  try {
    const baseline = await median((run) => peakRss(workDir, `baseline-${run}`, [process.execPath, '-e', '0'], 0));
    const read = (variant, expectedExit) =>
      median((run) =>
        peakRss(workDir, `${variant}-${run}`, [process.execPath, bin, 'accounts', 'get', '1', '--json'], expectedExit, {
          TAXPREP_BASE_URL: `${origin}/${variant}/v1beta`,
          TAXPREP_API_KEY: KEY,
        }),
      );
    const plain = await read('plain', 0);
    const gzip = await read('gzip', 0);
    const bomb = await read('bomb', 12);
    const row = (label, mb) => process.stdout.write(`${label.padEnd(52)} peak RSS ${mb.toFixed(1)} MB (${(mb / baseline).toFixed(2)}x node -e 0, ${(mb / plain).toFixed(2)}x plain)\n`);
    row('node -e 0', baseline);
    row(`6 MB answer, plain (${answers.plain.body.length} bytes)`, plain);
    row(`6 MB answer, gzip (${answers.gzip.body.length} bytes)`, gzip);
    row(`100 MB answer, br (${answers.bomb.body.length} bytes), exit 12`, bomb);
  } finally {
    server.close();
  }
}
