#!/usr/bin/env node
// `npm run demo`: starts the built-in mock on a free port, points a temporary profile at it and runs
// every command with its real output. It never touches the user's profiles or ledger: HOME and the
// XDG directories point into a temporary directory that is removed at the end, once every process
// it started has exited (the CLI writes its compiled-code cache there as it exits).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { openMockSession } from './mockSession.js';

const bold = process.stdout.isTTY && !process.env.NO_COLOR ? (text) => `\u001b[1m${text}\u001b[22m` : (text) => text;

// In a pipe (`npm run demo | less`) the commands still print what a person sees at a terminal
// (headers, readable dates, tables fitted to 80 columns), without colour, and their messages come
// down the same pipe in order instead of landing on the screen behind the pager.
const piped = !process.stdout.isTTY;
const childOutput = piped ? ['inherit', 1] : ['inherit', 'inherit'];
let session;

// A reader that goes away (`npm run demo | head`, or quitting `less` early) ends the demo quietly:
// the rest is not run, and the mock and the temporary directory are cleaned up all the same.
let readerGone = false;
const READER_GONE_EXIT = 141;
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
  readerGone = true;
});

/** Runs one command with the terminal as its output, after a `$ taxprep ...` line. */
function step(args, { expectExit = 0, input } = {}) {
  if (readerGone) return Promise.reject(new Error('the reader went away'));
  const shown = args.map((arg) => (/^[\w@./:=-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
  process.stdout.write(`\n${bold(`$ taxprep ${shown}`)}${input === undefined ? '' : bold('   # key on stdin')}\n`);
  return new Promise((resolve, reject) => {
    const child = session.taxprep(args, [input === undefined ? 'ignore' : 'pipe', ...childOutput]);
    if (input !== undefined) child.stdin.end(input);
    child.once('error', reject);
    child.once('exit', (code) => {
      // 141: the command's own output found the shared pipe closed, maybe before the demo's did.
      if (code === READER_GONE_EXIT) readerGone = true;
      if (readerGone) return reject(new Error('the reader went away'));
      if (expectExit !== 0) process.stdout.write(`(exit code ${code})\n`);
      if (code === expectExit) resolve();
      else reject(new Error(`taxprep ${shown} exited with ${code}, expected ${expectExit}`));
    });
  });
}

async function demo() {
  session = await openMockSession({ columns: piped ? 80 : undefined });
  const { home, started, key } = session;
  process.stdout.write(`${bold('taxprep demo')}: a mock service at ${started.base_url},\na temporary profile in ${home}\n`);

  const upload = join(home, 'w2-2025-demo.pdf');
  writeFileSync(upload, '%PDF-1.4\n% a small stand-in for a W-2\n');
  const unique = `${Date.now().toString(36)}`;

  await step(['profiles', 'add', '--insecure-storage', 'demo', '--api-key-stdin', '--base-url', started.base_url], { input: `${key.key}\n` });
  await step(['health']);
  await step(['whoami']);
  await step([
    'accounts', 'create', '--email', `dana.demo.${unique}@example.com`, '--first-name', 'Dana', '--last-name', 'Demo',
    '--spouse-email', `sam.demo.${unique}@example.com`, '--spouse-first-name', 'Sam', '--spouse-last-name', 'Demo',
  ]);
  await step(['accounts', 'get', '1001']);
  const clients = join(home, 'clients.csv');
  writeFileSync(clients, `email,first_name,last_name\nana.demo.${unique}@example.com,Ana,Demo\nben.demo.${unique}@example.com,Ben,"Demo, Jr."\n`);
  await step(['accounts', 'import', clients, '--links', join(home, 'links.csv')]);
  await step(['login-link', '1001', '--purpose', 'support_request', '--no-notify']);
  await step(['docs', 'upload', '1001', upload, '--tax-year', '2025', '--description', 'Demo upload']);
  // A shared folder laid out <account>/<tax year>/<file>: the W-2 uploaded above is skipped.
  const folder = join(home, 'shared', '1001', '2025');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'w2-2025-demo.pdf'), readFileSync(upload));
  writeFileSync(join(folder, '1099-int-2025-demo.pdf'), '%PDF-1.4\n% a small stand-in for a 1099-INT\n');
  await step(['docs', 'sync', join(home, 'shared')]);
  await step(['docs', 'list', '1001', '--tax-year', '2025']);
  await step(['docs', 'get', '7001']);
  await step(['projects', 'list', '1001']);
  await step(['projects', 'status', '5001']);
  await step(['deliverables', 'list', '--status', 'delivered']);
  await step(['deliverables', 'get', '5002']);
  await step(['deliverables', 'list', '--account', '1001', '--json']);
  await step(['status']);
  await hooksDemo();
  await step(['doctor']);
  await step(['accounts', 'get', '999999'], { expectExit: 4 });
}

/** Runs a command without showing it; resolves with its stdout. */
function captured(args) {
  return new Promise((resolve, reject) => {
    const child = session.taxprep(args, ['ignore', 'pipe', 'inherit']);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.once('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`taxprep ${args.join(' ')} exited with ${code}`))));
  });
}

/** A port free right now on 127.0.0.1, for the receiver. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A hook pointing at `hooks listen`, a project moved through /_mock, and the signed delivery the receiver verified. */
async function hooksDemo() {
  const port = await freePort();
  await step(['watch', '--once']);
  await step(['hooks', 'add', `http://127.0.0.1:${port}/`, '--events', 'project.*']);
  const [hook] = JSON.parse(await captured(['hooks', 'list', '--json'])).hooks;
  writeFileSync(join(session.home, 'hook.secret'), await captured(['hooks', 'show', hook.id, '--secret']));
  process.stdout.write(`\n${bold(`$ taxprep hooks listen --port ${port} --secret-file hook.secret &`)}\n`);
  const listener = session.taxprep(['hooks', 'listen', '--port', String(port), '--secret-file', join(session.home, 'hook.secret')], ['ignore', ...childOutput]);
  const listening = new Promise((resolve) => listener.once('exit', resolve));
  for (let tries = 0; tries < 100; tries += 1) {
    const up = await new Promise((resolve) => connect(port, '127.0.0.1').once('connect', function () { this.destroy(); resolve(true); }).once('error', () => resolve(false)));
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const appUrl = session.started.base_url.replace(/\/v1beta$/, '');
  process.stdout.write(`\n${bold(`$ curl -X POST ${appUrl}/_mock/projects/5003 -d '{"status":"in_review","progress_percentage":80}'`)}\n`);
  const moved = await fetch(`${appUrl}/_mock/projects/5003`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'in_review', progress_percentage: 80 }) });
  if (!moved.ok) throw new Error(`/_mock answered ${moved.status}`);
  await step(['watch', '--once']);
  await step(['hooks', 'deliveries']);
  listener.kill('SIGINT');
  await listening;
}

const cleanUp = async () => session?.close();

process.once('SIGINT', () => {
  // The commands got the signal too (same process group); the exit code says the demo was cut short.
  process.exitCode = 130;
  void cleanUp().then(() => process.exit(130));
});

let failure;
try {
  await demo();
} catch (error) {
  failure = error;
}
await cleanUp();
if (readerGone) {
  process.exitCode = 0;
} else if (failure === undefined) {
  // Commands that work in a fresh clone (taxprep is on no PATH until `npm link`), each line within 80 columns.
  process.stdout.write(
    `\n${bold('Done.')} The mock is stopped and the temporary profile removed.\n` +
      'Try it yourself, from this folder:\n' +
      '  npx taxprep serve --mock      # the mock, until Ctrl-C\n' +
      '  npx taxprep health            # in another terminal, while the mock runs\n' +
      '(`npm link` first puts taxprep on your PATH, to type it without npx.)\n',
  );
} else {
  process.stderr.write(`demo failed: ${failure instanceof Error ? failure.message : String(failure)}\n`);
  process.exitCode = 1;
}
