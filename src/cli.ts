import { Command, CommanderError } from 'commander';
import { VERSION } from './api/version';
import { registerAccounts } from './commands/accounts/register';
import { registerApi } from './commands/api/register';
import { registerCompletion } from './commands/completion/register';
import { registerDeliverables } from './commands/deliverables/register';
import { registerDocs } from './commands/docs/register';
import { registerHealth } from './commands/health/register';
import { registerLoginLink } from './commands/login-link/register';
import { registerProfiles } from './commands/profiles/register';
import { registerProjects } from './commands/projects/register';
import { registerServe } from './commands/serve/register';
import type { Dispatch } from './commands/types';
import { registerWhoami } from './commands/whoami/register';
import { createContext, type Clock, type GlobalOptions, type IO, type OwnedContext } from './context';
import { ApiError, CliError, EXIT, UsageError } from './errors';
import { registerHelp } from './help/register';
import { createIO } from './io';
import { durationRule, parseDuration } from './lib/duration';

type Env = Record<string, string | undefined>;

/** What tests replace: streams (and TTY facts), the environment, time and randomness. */
export interface MainOverrides {
  io?: Partial<IO>;
  env?: Env;
  clock?: Clock;
  random?: () => number;
}

interface OutputSinks {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

const MAX_RETRIES_LIMIT = 20;

/**
 * The command tree. Register functions add flags and descriptions only; every command's module is
 * imported by `dispatch` when it runs, so building the tree loads nothing heavy.
 */
export function buildProgram(dispatch: Dispatch, output?: OutputSinks): Command {
  const program = new Command('taxprep')
    .description('Work with the partner tax-preparation service from a terminal, a script or cron.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .option('--json', 'print the service\'s JSON document on stdout; errors as JSON on stderr')
    .option('--profile <name>', 'use this stored profile (see `taxprep profiles list`)')
    .option('--base-url <url>', 'service address including /v1beta (overrides the profile)')
    .option('--timeout <duration>', 'time allowed for one request, e.g. 30s, 2m, 500ms (default: 30s)')
    .option('--max-retries <n>', `retries of a failed request, 0-${MAX_RETRIES_LIMIT} (default: 3)`)
    .option('--no-retry', 'never retry a request (same as --max-retries 0)')
    .option('--verbose', 'trace each request and response on stderr (the key redacted)')
    .option('--no-color', 'no colour (also NO_COLOR=1 or TERM=dumb)')
    .helpCommand(false)
    .exitOverride()
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep profiles add acme                     # stores a key read from a hidden prompt
  $ taxprep accounts get 1001
  $ taxprep deliverables list --status completed --json | jq '.deliverables[].id'
  $ taxprep serve --mock                          # a local copy of the service to try things on

Help topics:
  taxprep help environment    environment variables and the order settings are taken in
  taxprep help exit-codes     what each exit code means, for scripts and cron
  taxprep help <command>      help for one command`,
    );
  if (output !== undefined) {
    // Commander's own error line is replaced by main's report (which knows about --json).
    program.configureOutput({ writeOut: output.writeOut, writeErr: output.writeErr, outputError: () => undefined });
  }

  registerHealth(program, dispatch);
  registerAccounts(program, dispatch);
  registerLoginLink(program, dispatch);
  registerDocs(program, dispatch);
  registerProjects(program, dispatch);
  registerDeliverables(program, dispatch);
  registerProfiles(program, dispatch);
  registerWhoami(program, dispatch);
  registerApi(program, dispatch);
  registerServe(program, dispatch);
  registerCompletion(program, dispatch);
  registerHelp(program);
  return program;
}

/** The program's own flags, checked: a table-tested pure function of what commander parsed. */
export function parseGlobalOptions(raw: Record<string, unknown>): GlobalOptions {
  const globals: GlobalOptions = {
    json: raw.json === true,
    verbose: raw.verbose === true,
    color: raw.color !== false,
    retry: raw.retry !== false,
  };
  if (typeof raw.profile === 'string') globals.profile = raw.profile;
  if (typeof raw.baseUrl === 'string') globals.baseUrl = raw.baseUrl;
  if (typeof raw.timeout === 'string') {
    const rule = `must be ${durationRule({ bareSeconds: true })}, greater than 0`;
    const timeoutMs = parseDuration(raw.timeout, { bareSeconds: true }) ?? 0;
    if (timeoutMs < 1) throw new UsageError(`--timeout ${rule}`, { details: { '--timeout': [rule] } });
    globals.timeoutMs = timeoutMs;
  }
  if (typeof raw.maxRetries === 'string') {
    const rule = `must be an integer from 0 to ${MAX_RETRIES_LIMIT}`;
    const retries = /^\d{1,3}$/.test(raw.maxRetries) ? Number(raw.maxRetries) : NaN;
    if (!(retries <= MAX_RETRIES_LIMIT)) throw new UsageError(`--max-retries ${rule}`, { details: { '--max-retries': [rule] } });
    globals.maxRetries = retries;
  }
  return globals;
}

/** `--json` decides the error format even when parsing failed before commander read the flags. */
function asksForJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * Runs taxprep and returns the exit code. Every failure is mapped here, in one place: a `CliError`
 * to its exit code, commander's usage errors to 2, anything else (a bug) to 1.
 */
export async function main(argv: string[], overrides: MainOverrides = {}): Promise<number> {
  const env = overrides.env ?? process.env;
  const stdout = overrides.io?.stdout ?? process.stdout;
  const stderr = overrides.io?.stderr ?? process.stderr;
  const stdin = overrides.io?.stdin ?? process.stdin;
  let json = asksForJson(argv);
  let verbose = argv.includes('--verbose');
  let exitCode: number = EXIT.OK;
  let context: OwnedContext | undefined;

  const dispatch: Dispatch = async (load, raw) => {
    const globals = parseGlobalOptions(program.opts());
    json = globals.json;
    verbose = globals.verbose;
    const module = await load();
    const options = module.parseOptions(raw);
    const io = { ...createIO({ env, color: globals.color, stdout, stderr, stdin }), ...overrides.io };
    context = createContext({ io, env, globals, clock: overrides.clock, random: overrides.random });
    exitCode = (await module.run(context, options)) ?? EXIT.OK;
  };
  const program = buildProgram(dispatch, {
    writeOut: (text) => stdout.write(text),
    writeErr: (text) => stderr.write(text),
  });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    exitCode = reportError(error, { write: (text) => stderr.write(text), json, verbose });
  } finally {
    await context?.close();
  }
  return exitCode;
}

/** Writes the one report of a failure on stderr and returns its exit code. */
export function reportError(error: unknown, out: { write(text: string): void; json: boolean; verbose: boolean }): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.OK;
    // A bare `taxprep` prints the help (on stderr) and counts as a usage error.
    if (error.code === 'commander.help') return EXIT.USAGE;
    const message = error.message.replace(/^error: /, '');
    if (out.json) out.write(`${JSON.stringify({ error: { code: 'USAGE_ERROR', message: message.replace(/\n/g, ' ') } })}\n`);
    else out.write(`error: ${message}\nRun with --help for usage and examples.\n`);
    return EXIT.USAGE;
  }
  if (error instanceof CliError) {
    if (out.json) {
      out.write(`${JSON.stringify(error.toBody())}\n`);
    } else {
      out.write(`error: ${error.message}\n`);
      // A usage error's message already names each field; the service's messages are listed.
      if (error instanceof ApiError) for (const line of detailLines(error.details)) out.write(`  ${line}\n`);
      if (error.hint !== undefined) out.write(`${error.hint}\n`);
      if (out.verbose && error.cause !== undefined) out.write(`cause: ${describeCause(error.cause)}\n`);
    }
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (out.json) {
    out.write(`${JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: `unexpected failure in taxprep: ${message}` } })}\n`);
  } else {
    out.write(`error: unexpected failure in taxprep: ${message}\n`);
    out.write(out.verbose && error instanceof Error && error.stack ? `${error.stack}\n` : 'This is a bug: run again with --verbose and report the output.\n');
  }
  return EXIT.INTERNAL;
}

/** Field messages (`email: must be a valid email address`) from validation-style details. */
function detailLines(details: Record<string, unknown> | undefined): string[] {
  if (details === undefined) return [];
  return Object.entries(details)
    .filter((entry): entry is [string, string[]] => Array.isArray(entry[1]) && entry[1].every((item) => typeof item === 'string'))
    .map(([field, messages]) => `${field}: ${messages.join('; ')}`);
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as { code?: unknown }).code;
  return `${cause.name}${typeof code === 'string' ? ` ${code}` : ''}: ${cause.message}`;
}
