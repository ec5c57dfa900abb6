import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { API_KEY_PREFIX, redactApiKey } from '../../src/contract/apiKeys';
import { DEMO_API_KEYS } from '../../src/mock/seed';

const BIN = fileURLToPath(new URL('../../bin/taxprep.js', import.meta.url));

/**
 * The command line that runs taxprep: `node bin/taxprep.js` (the built bundle), or the single
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

/**
 * Runs the real `node bin/taxprep.js` (the built bundle: `npm run build` first). Every call's
 * output is scanned for API keys, and a key printed in full fails the test wherever it happens.
 */
export async function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  const home = options.home ?? makeHome();
  for (const value of [...Object.values(options.env ?? {}), ...(options.input === undefined ? [] : options.input.split(/\s+/))]) {
    if (value.match(KEY_SHAPED)) registerSecret(value);
  }
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    ...options.env,
  };
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
  const stdout = options.tty ? String(result.stdout).replace(/\r\n/g, '\n') : String(result.stdout);
  const stderr = String(result.stderr);
  const leaked = findSecrets(`${stdout}\n${stderr}`);
  if (leaked.length > 0) {
    const shownArgs = args.join(' ').replace(KEY_SHAPED, (key) => redactApiKey(key));
    throw new Error(`taxprep ${shownArgs} printed an API key in full: ${leaked.join(', ')}`);
  }
  return { exitCode: result.exitCode ?? -1, ...(result.signal === undefined ? {} : { signal: result.signal }), stdout, stderr };
}
