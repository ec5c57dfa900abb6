import type { Readable, Writable } from 'node:stream';
import type { Clock, IO } from './types';
import { UsageError } from './errors';

type Env = Record<string, string | undefined>;
type MaybeTTY = { isTTY?: boolean; columns?: number };

/**
 * Colour for one stream, as clig.dev and no-color.org describe it: only on a terminal, never
 * with a non-empty NO_COLOR, TERM=dumb or --no-color; a FORCE_COLOR other than "0" or "false"
 * forces it on (for CI logs that render colour), except against --no-color: a flag beats the
 * environment.
 */
export function colorEnabled(isTTY: boolean, env: Env, colorFlag: boolean): boolean {
  if (!colorFlag) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '0' && force !== 'false') return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return isTTY;
}

const DEFAULT_COLUMNS = 80;

/** A stream's width in columns when it is a terminal that says so, else 80 (a pipe, a log). */
export function terminalColumns(stream: unknown): number {
  const columns = (stream as MaybeTTY).columns;
  return columns !== undefined && columns > 0 ? columns : DEFAULT_COLUMNS;
}

/**
 * `TAXPREP_FORCE_TTY` (GitHub CLI's `GH_FORCE_TTY`): stdout is printed as for a terminal (headers,
 * readable dates, fitted tables) even in a pipe, `npm run demo | less` for one. A number is also
 * the width in columns. It turns on neither colour (`FORCE_COLOR` does) nor prompts, and leaves
 * stderr alone: progress stays off in a log.
 */
export function forcedTerminal(env: Env): { columns: number | undefined } | undefined {
  const value = env.TAXPREP_FORCE_TTY;
  if (value === undefined || value === '') return undefined;
  const columns = /^\d{1,4}$/.test(value.trim()) ? Number(value.trim()) : undefined;
  return { columns: columns !== undefined && columns >= 20 ? columns : undefined };
}

/** The streams with what is known about them; `process`'s by default. */
export function createIO(options: {
  env: Env;
  color: boolean;
  stdout?: Writable;
  stderr?: Writable;
  stdin?: Readable;
}): IO {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const isTTY = (stream: unknown) => (stream as MaybeTTY).isTTY === true;
  const forced = forcedTerminal(options.env);
  const stdoutIsTTY = isTTY(stdout) || forced !== undefined;
  const stderrIsTTY = isTTY(stderr);
  const columns = forced?.columns ?? (stdout as MaybeTTY).columns ?? (stderr as MaybeTTY).columns;
  return {
    stdout,
    stderr,
    // The process's stdin, and whether it is a terminal, only when a command asks: making its
    // stream (or loading node:tty) cost every run that never reads it (most) 1-2 ms of start-up.
    get stdin() {
      return options.stdin ?? process.stdin;
    },
    stdoutIsTTY,
    stderrIsTTY,
    get stdinIsTTY() {
      return options.stdin === undefined ? process.getBuiltinModule('node:tty').isatty(0) : isTTY(options.stdin);
    },
    stdoutColor: colorEnabled(isTTY(stdout), options.env, options.color),
    stderrColor: colorEnabled(stderrIsTTY, options.env, options.color),
    columns: stdoutIsTTY && columns !== undefined && columns > 0 ? columns : DEFAULT_COLUMNS,
  };
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACES = new Set(['\u007f', '\b']);

/**
 * A secret from the user: on a terminal a prompt on stderr and keystrokes read without echo; from a
 * pipe, the first line of stdin. Trimmed either way, since a pasted key often carries a newline.
 *
 * Raw mode turns Ctrl-C into a keystroke, so it is handed back as what it is: the prompt's line is
 * finished, the terminal restored, and `interrupt` (SIGINT to this process) ends taxprep the way
 * Ctrl-C does anywhere else, exit status 130, with nothing saved.
 */
export async function readSecret(io: IO, prompt: string, interrupt: () => Promise<void> | void = interruptSelf): Promise<string> {
  if (!io.stdinIsTTY) return (await readFirstLine(io.stdin)).trim();
  let secret: string;
  try {
    // The prompt appears once echo is off, so nothing typed after it is ever shown.
    secret = await readHidden(io.stdin, () => io.stderr.write(prompt));
  } catch (error) {
    io.stderr.write('\n');
    if (error === INTERRUPTED) await interrupt();
    throw error;
  }
  io.stderr.write('\n');
  return secret.trim();
}

/** How long the signal gets to end the process before the interruption is reported as an error instead. */
const SIGNAL_GRACE_MS = 1000;

/**
 * Sends SIGINT to this process and gives it time to act: a listener (conf's exit hooks, through
 * when-exit) handles the signal on a later turn of the event loop and then raises it again, and
 * the error thrown meanwhile must not end the process first with an exit code of its own.
 */
async function interruptSelf(): Promise<void> {
  process.kill(process.pid, 'SIGINT');
  await new Promise((resolve) => setTimeout(resolve, SIGNAL_GRACE_MS));
}

/** What `readHidden` rejects with on Ctrl-C; a usage error should the signal be caught elsewhere. */
const INTERRUPTED = new UsageError('cancelled at the prompt; nothing was saved');

function readHidden(stdin: Readable, prompt: () => void): Promise<string> {
  const raw = stdin as Readable & { setRawMode?: (on: boolean) => void };
  raw.setRawMode?.(true);
  prompt();
  stdin.setEncoding('utf8');
  let typed = '';
  return new Promise<string>((resolve, reject) => {
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      raw.setRawMode?.(false);
      stdin.pause();
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const character of chunk) {
        if (character === '\r' || character === '\n' || character === CTRL_D) return finish();
        if (character === CTRL_C) return finish(INTERRUPTED);
        if (BACKSPACES.has(character)) typed = typed.slice(0, -1);
        else typed += character;
      }
    };
    const onEnd = () => finish();
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.resume();
  });
}

/**
 * A yes-or-no question to a person at a terminal: asked on stderr, answered by one line of stdin
 * (the terminal echoes it). Only `y` or `yes`, in any case, is yes; Enter alone, anything else and
 * the end of input (Ctrl-D) are no. Ctrl-C stops taxprep as anywhere else (exit 130).
 */
export async function askYesNo(io: IO, question: string): Promise<boolean> {
  io.stderr.write(`${question} [y/N] `);
  const { line, ended } = await readTypedLine(io.stdin);
  if (ended) io.stderr.write('\n');
  return /^\s*y(es)?\s*$/i.test(line);
}

/** One line typed at a terminal; stdin is paused afterwards, so the process can end. */
function readTypedLine(stdin: Readable): Promise<{ line: string; ended: boolean }> {
  stdin.setEncoding('utf8');
  let typed = '';
  return new Promise((resolve) => {
    const finish = (ended: boolean) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.pause();
      resolve({ line: typed, ended });
    };
    const onData = (chunk: string) => {
      const newline = chunk.indexOf('\n');
      typed += newline >= 0 ? chunk.slice(0, newline) : chunk;
      if (newline >= 0) finish(false);
    };
    const onEnd = () => finish(true);
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.resume();
  });
}

/** Reads up to the first newline (or the end of input), leaving the rest of stdin unread. */
async function readFirstLine(stdin: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    const newline = text.indexOf('\n');
    if (newline >= 0) return text.slice(0, newline);
  }
  return text;
}

/** The platform's "open this URL" command, or undefined where none can work (no display). */
export function browserCommand(platform: NodeJS.Platform, env: Env): { command: string; args: string[] } | undefined {
  if (env.BROWSER === 'none') return undefined;
  if (platform === 'darwin') return { command: 'open', args: [] };
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] };
  if (env.DISPLAY === undefined && env.WAYLAND_DISPLAY === undefined) return undefined;
  return { command: 'xdg-open', args: [] };
}

/** Opens `url` in a browser, detached; prints it on stderr when there is no way to. */
export async function openUrl(io: IO, env: Env, url: string): Promise<void> {
  const launcher = browserCommand(process.platform, env);
  const printInstead = () => {
    io.stderr.write(`Open this link in a browser: ${url}\n`);
  };
  if (launcher === undefined) return printInstead();
  const { spawn } = await import('node:child_process');
  await new Promise<void>((resolve) => {
    const child = spawn(launcher.command, [...launcher.args, url], { detached: true, stdio: 'ignore' });
    child.once('error', () => {
      printInstead();
      resolve();
    });
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}
