import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options, type ResultPromise } from 'execa';
import { API_KEY_PREFIX, redactApiKey } from '../../src/contract/apiKeys';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { expectDeclaredExit } from './exitCodes';
import type { Clock } from '../../src/types';

const BIN = fileURLToPath(new URL('../../bin/taxprep.cjs', import.meta.url));

/**
 * The command line that runs taxprep: `node bin/taxprep.cjs` (the built bundle), or the single
 * executable named by TAXPREP_TEST_EXECUTABLE (`npm run release` first), to run the end-to-end
 * tests against it: `TAXPREP_TEST_EXECUTABLE=$PWD/release/taxprep-0.1.0-linux-x64 npx vitest run ... test/e2e`.
 */
export function taxprepCommand(): string[] {
  const executable = process.env.TAXPREP_TEST_EXECUTABLE;
  return executable ? [executable] : [process.execPath, BIN];
}

export interface CliResult {
  /** -1 when a signal ended the process (then `signal` names it). */
  exitCode: number;
  signal?: string;
  stdout: string;
  /** Empty for `tty: true`: a terminal has one screen, and all of it is in `stdout`. */
  stderr: string;
}

export interface RunCliOptions {
  /** Added to a minimal environment (PATH and temporary HOME and XDG directories); nothing else leaks in. */
  env?: Record<string, string>;
  /** What stdin holds; under `tty`, what is typed at the terminal (nothing, and then the end of input, when omitted). */
  input?: string;
  /**
   * Runs under a pseudo-terminal (`script` from util-linux): stdout, stderr and stdin are all
   * terminals, and what they printed arrives together in `stdout`, line ends as `\n`.
   */
  tty?: boolean;
  /** The HOME to use; a fresh temporary one when omitted. */
  home?: string;
}

/** A temporary HOME holding its own XDG config and data directories; share one in a suite that needs profiles. */
export function makeHome(): string {
  return mkdtempSync(join(tmpdir(), 'taxprep-e2e-home-'));
}

/** Keys that must never be printed in full, besides anything shaped like a key. */
const knownSecrets = new Set<string>(Object.values(DEMO_API_KEYS as Record<string, string>));

/** Adds a key (from `startServeMock().keys`, say) to those the scanner looks for. */
export function registerSecret(secret: string): void {
  knownSecrets.add(secret);
}

// Anything that looks like a whole key: the prefix, the underscore and 20 or more letters and digits.
// A redacted key (`tpk_…abcd`) does not match.
const KEY_SHAPED = new RegExp(`${API_KEY_PREFIX}_[A-Za-z0-9]{20,}`, 'g');

/** Every known secret or key-shaped string in `text`, redacted for the report. */
export function findSecrets(text: string, secrets: Iterable<string> = knownSecrets): string[] {
  const found = new Set<string>();
  for (const secret of secrets) if (secret.length > 0 && text.includes(secret)) found.add(redactApiKey(secret));
  for (const match of text.matchAll(KEY_SHAPED)) found.add(redactApiKey(match[0]));
  return [...found];
}

/** Text without colour and other SGR escape sequences, for asserting on terminal layout. */
export function withoutColor(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The environment every run gets: PATH and a temporary HOME with its XDG directories, then `env`. */
function cliEnv(home: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    ...env,
  };
}

/** Keys given to a run in its environment or input are looked for in its output too. */
function registerGiven(options: RunCliOptions): void {
  for (const value of [...Object.values(options.env ?? {}), ...(options.input === undefined ? [] : options.input.split(/\s+/))]) {
    if (value.match(KEY_SHAPED)) registerSecret(value);
  }
}

/** Throws when `texts` hold a key in full; `what` names the run in the failure. */
export function expectNoSecrets(what: string, ...texts: string[]): void {
  const leaked = findSecrets(texts.join('\n'));
  if (leaked.length > 0) throw new Error(`${what.replace(KEY_SHAPED, (key) => redactApiKey(key))} printed an API key in full: ${leaked.join(', ')}`);
}

/**
 * The outcome of a finished run, its output scanned. `argv`: the words taxprep ran with, when the
 * run's exit code is taxprep's own; that code must then be one its command declares.
 */
function scanned(what: string, result: { exitCode?: number; signal?: string; stdout?: unknown; stderr?: unknown }, options: { tty?: boolean; argv?: readonly string[] } = {}): CliResult {
  const stdout = options.tty ? String(result.stdout).replace(/\r\n/g, '\n') : String(result.stdout ?? '');
  const stderr = String(result.stderr ?? '');
  expectNoSecrets(what, stdout, stderr);
  const exitCode = result.signal === undefined ? (result.exitCode ?? -1) : -1;
  if (options.argv !== undefined) expectDeclaredExit(options.argv, exitCode);
  return { exitCode: result.exitCode ?? -1, ...(result.signal === undefined ? {} : { signal: result.signal }), stdout, stderr };
}

/**
 * Runs the real `node bin/taxprep.cjs` (the built bundle: `npm run build` first). Every call's
 * output is scanned for API keys, and a key printed in full fails the test wherever it happens.
 */
export async function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  registerGiven(options);
  const env = cliEnv(options.home ?? makeHome(), options.env);
  if (process.env[IN_PROCESS] === '1' && !options.tty) return scanned(`taxprep ${args.join(' ')}`, await runInProcess(args, env, options.input ?? '', false), { argv: args });
  const command = [...taxprepCommand(), ...args];
  const result = options.tty
    ? await execa('script', ['-qfec', command.map(shellQuote).join(' '), '/dev/null'], {
        env,
        extendEnv: false,
        reject: false,
        ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
        stripFinalNewline: false,
      })
    : await execa(command[0]!, command.slice(1), { env, extendEnv: false, reject: false, input: options.input ?? '', stripFinalNewline: false });
  return scanned(`taxprep ${args.join(' ')}`, result, { ...options, argv: args });
}

/**
 * Set by the mutation tests' configuration (test/mutation/vitest.config.ts): runCli runs the
 * sources' `main` in the test's own process, where Stryker's mutants are, instead of spawning the
 * build, which holds none. The same environment, arguments and input; a terminal run still spawns.
 */
export const IN_PROCESS = 'TAXPREP_TEST_IN_PROCESS';

/**
 * True under the mutation tests' configuration. A test whose subject is a process it spawns and
 * kills or interrupts (`it.skipIf(inProcess)`) is left out there: the build it spawns holds no
 * mutant, each mutant it reaches would pay for its seconds of waiting, and the in-process tests of
 * the same files settle those mutants (test/mutation/byHand.js replays the kill-only mutations).
 */
export const inProcess = process.env[IN_PROCESS] === '1';

async function runInProcess(args: string[], env: Record<string, string>, input: string, tty: boolean, clock?: Clock, oneScreen = false, columns?: number): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const [{ main }, { CapturedStream }, { PassThrough }] = await Promise.all([import('../../src/cli'), import('./context'), import('node:stream')]);
  const stdout = new CapturedStream({ isTTY: tty, columns });
  const stderr = oneScreen ? stdout : new CapturedStream({ isTTY: tty, columns });
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end(input);
  const exitCode = await main(args, { io: { stdout, stderr, stdin }, env, ...(clock === undefined ? {} : { clock }) });
  return { exitCode, stdout: stdout.text(), stderr: oneScreen ? '' : stderr.text() };
}

/**
 * Runs the sources' `main` in the test's own process, always (as runCli does under
 * TAXPREP_TEST_IN_PROCESS), its output scanned like runCli's: for a test of a command's output that
 * needs no build and should count in the mutation tests. `tty` dresses stdout and stderr as
 * terminals (kept apart, unlike runCli's, unless `oneScreen`: then both write to one screen, all of
 * it in `stdout`, in the order written); stdin is never one, and `columns` is the terminals' width
 * (100 when omitted). `clock` replaces the command's clock (its waits, its times), as `main` allows.
 */
export async function runMain(args: string[], options: RunCliOptions & { clock?: Clock; oneScreen?: boolean; columns?: number } = {}): Promise<CliResult> {
  registerGiven(options);
  const env = cliEnv(options.home ?? makeHome(), options.env);
  return scanned(`taxprep ${args.join(' ')}`, await runInProcess(args, env, options.input ?? '', options.tty === true, options.clock, options.oneScreen, options.columns), { argv: args });
}

export interface StartedCli {
  /** The running process: to signal it, read its output as it comes, or write to its stdin. */
  child: ResultPromise;
  /** Its outcome once it ends, the output scanned like runCli's. */
  result: Promise<CliResult>;
}

/**
 * Starts `node bin/taxprep.cjs` without waiting for it, for a test that kills it, interrupts it or
 * reads its output as it comes; the same environment as runCli, and the same scan when it ends.
 * `stdin` is a pipe unless `input` is given.
 */
export function startCli(args: string[], options: Omit<RunCliOptions, 'tty'> & { stdin?: 'pipe' | 'ignore'; stdout?: 'pipe' | 'ignore'; detached?: boolean; keysOnStdout?: boolean } = {}): StartedCli {
  registerGiven(options);
  const [command, ...rest] = [...taxprepCommand(), ...args];
  const child = execa(command!, rest, {
    env: cliEnv(options.home ?? makeHome(), options.env),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    ...(options.input === undefined ? { stdin: options.stdin ?? 'pipe' } : { input: options.input }),
    ...(options.stdout === undefined ? {} : { stdout: options.stdout }),
    ...(options.detached === undefined ? {} : { detached: options.detached }),
  });
  const what = `taxprep ${args.join(' ')}`;
  // `taxprep serve --mock` prints the keys it made on stdout, as its start line promises; stderr is still scanned.
  const result = child.then((done) => (options.keysOnStdout ? { ...scanned(what, { ...done, stdout: '' }, { argv: args }), stdout: String(done.stdout ?? '') } : scanned(what, done, { argv: args })));
  return { child, result };
}

/**
 * The command line that runs taxprep, quoted for a shell: for a test that runs it the way a user's
 * script or terminal does (a cron recipe, `script`, a redirect). Run that through `runScanned`.
 */
export function cliCommandLine(args: string[] = []): string {
  const line = [...taxprepCommand(), ...args].map(shellQuote).join(' ');
  commandLines.set(line, args);
  return line;
}

/** The argv of each command line cliCommandLine made, to know what a shell that runs one runs. */
const commandLines = new Map<string, string[]>();

/**
 * The argv of taxprep when `file args` ends with taxprep's own exit code: `script -qfec LINE`, or
 * `sh -c '... ; exec LINE > file'` of a line from cliCommandLine. Undefined for anything else (a
 * recipe, a pipeline), whose exit code is the shell's.
 */
function taxprepArgvOf(args: readonly string[]): string[] | undefined {
  for (const arg of args) {
    const exec = /(?:^|;\s*)exec (.*?)(?: \d?>>? ?\S+)*$/.exec(arg)?.[1];
    const argv = commandLines.get(arg) ?? (exec === undefined ? undefined : commandLines.get(exec));
    if (argv !== undefined) return argv;
  }
  return undefined;
}

/**
 * Starts a command that runs taxprep (a shell, `script`, a recipe from the docs), for a test that
 * talks to it as it runs; what it printed, and the files named in `files` that it wrote, are
 * scanned when it ends, like runCli's output.
 */
export function startScanned(file: string, args: string[], options: Options & { files?: string[] } = {}): StartedCli {
  const { files = [], ...execaOptions } = options;
  const what = `${file} ${args.join(' ')}`;
  const child = execa(file, args, { reject: false, ...execaOptions });
  const argv = taxprepArgvOf(args);
  const result = child.then((done) => {
    const outcome = scanned(what, done as { exitCode?: number; signal?: string; stdout?: unknown; stderr?: unknown }, argv === undefined ? {} : { argv });
    for (const written of files) if (existsSync(written)) expectNoSecrets(`${what} (in ${written})`, readFileSync(written, 'utf8'));
    return outcome;
  });
  return { child, result };
}

/** Runs a command that runs taxprep and scans its output (see `startScanned`). */
export function runScanned(file: string, args: string[], options: Options & { files?: string[] } = {}): Promise<CliResult> {
  return startScanned(file, args, options).result;
}
