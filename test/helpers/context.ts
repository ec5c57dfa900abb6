import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { createContext, type OwnedContext } from '../../src/context';
import type { Clock, GlobalOptions } from '../../src/types';
import { createIO } from '../../src/io';

/** A writable that keeps what was written, dressed as a terminal or a pipe. */
export class CapturedStream extends Writable {
  private readonly chunks: string[] = [];
  readonly isTTY: boolean;
  readonly columns: number | undefined;
  constructor(options: { isTTY: boolean; columns?: number }) {
    super();
    this.isTTY = options.isTTY;
    this.columns = options.isTTY ? (options.columns ?? 100) : undefined;
  }
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    callback();
  }
  text(): string {
    return this.chunks.join('');
  }
}

export const DEFAULT_GLOBALS: GlobalOptions = { json: false, verbose: false, color: true, retry: true };

export interface TestContextOptions {
  /** The whole environment the command sees. XDG_CONFIG_HOME defaults to a fresh temporary directory. */
  env?: Record<string, string | undefined>;
  globals?: Partial<GlobalOptions>;
  /** What stdin holds (it ends after it); empty by default. */
  stdinText?: string;
  /** Whether all three streams are terminals, or each one separately. Pipes by default. */
  tty?: boolean | { stdout?: boolean; stderr?: boolean; stdin?: boolean };
  columns?: number;
  /** Replaces real time and sleeping, e.g. to skip retry waits. */
  clock?: Clock;
  random?: () => number;
}

export interface TestContext {
  ctx: OwnedContext;
  stdout(): string;
  stderr(): string;
  /** URLs the command asked to open in a browser (none is launched). */
  opened: string[];
  /** The profile directory in use (XDG_CONFIG_HOME). */
  configHome: string;
}

/**
 * A context with captured streams, for running a command module in-process:
 * `await module.run(t.ctx, options)`, then assert on `t.stdout()` and `t.stderr()`.
 * Call `t.ctx.close()` when a test made API calls, so that no connection stays open.
 */
export function createTestContext(options: TestContextOptions = {}): TestContext {
  const tty = typeof options.tty === 'object' ? options.tty : { stdout: options.tty, stderr: options.tty, stdin: options.tty };
  const stdout = new CapturedStream({ isTTY: tty.stdout === true, columns: options.columns });
  const stderr = new CapturedStream({ isTTY: tty.stderr === true, columns: options.columns });
  const stdin = Object.assign(new PassThrough(), { isTTY: tty.stdin === true });
  stdin.end(options.stdinText ?? '');
  const configHome = options.env?.XDG_CONFIG_HOME ?? mkdtempSync(join(tmpdir(), 'taxprep-test-config-'));
  // Ledgers (`accounts create` records what it made) go to a directory of the test's own.
  const dataHome = options.env?.XDG_DATA_HOME ?? mkdtempSync(join(tmpdir(), 'taxprep-test-data-'));
  const env = { ...options.env, XDG_CONFIG_HOME: configHome, XDG_DATA_HOME: dataHome };
  const globals = { ...DEFAULT_GLOBALS, ...options.globals };
  const io = createIO({ env, color: globals.color, stdout, stderr, stdin });
  const opened: string[] = [];
  const ctx = createContext({ io, env, globals, clock: options.clock, random: options.random });
  ctx.openUrl = async (url) => {
    opened.push(url);
  };
  return { ctx, stdout: () => stdout.text(), stderr: () => stderr.text(), opened, configHome };
}
