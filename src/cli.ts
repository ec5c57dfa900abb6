import { Command, CommanderError, Option } from 'commander';
import { RELEASE_BUILD, VERSION } from './api/version';
import { addCommand, describeCommand, groupAction } from './commands/register';
import { walk, type CommandSpec } from './commands/spec';
import { formatHelp } from './help/layout';
import { MAX_RETRIES_LIMIT, program as programSpec } from './commands/tree';
import type { Dispatch } from './commands/types';
import { createContext, type OwnedContext } from './context';
import type { Clock, GlobalOptions, IO } from './types';
import { ApiError, CliError, EXIT, OutputError, UsageError } from './errors';
import { refuseCrashPointsInRelease } from './lib/crashPoints';
import { checkStateUrlFlag } from './state/urlFlag';
import { outputFailure } from './output/write';
import { createIO, terminalColumns } from './io';
import { jsonFieldsOf } from './output/json';
import { wrapMessage } from './output/wrap';
import { bareNumberNote, durationRule, parseDuration } from './lib/duration';

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
  /** The terminal's width for help; undefined in a pipe (80). */
  helpWidth?: number;
}

/** The program: its flags are read from the whole command line, `--json FIELDS` included. */
class Program extends Command {
  override parseOptions(argv: string[]) {
    return super.parseOptions(separateJsonFlag(argv));
  }
}

/**
 * The command tree, made from the declarations in src/commands/tree.ts. Every command's module is
 * imported by `dispatch` when it runs, so building the tree loads nothing heavy. `branches` limits
 * it to some top-level commands' branches (see `branchesOf`).
 */
export function buildProgram(dispatch: Dispatch, output?: OutputSinks, branches: readonly CommandSpec[] = programSpec.subcommands ?? []): Command {
  const root = new Program(programSpec.name)
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .helpCommand(false)
    .configureHelp({ formatHelp })
    .exitOverride()
    .showSuggestionAfterError(true);
  describeCommand(root, programSpec)
    .addOption(new Option('-v', 'print the version').hideHelp())
    .allowExcessArguments(true)
    .action(function (this: Command) {
      if (this.opts().v === true && this.args.length === 0) this.configureOutput().writeOut?.(`${VERSION}\n`);
      else groupAction.call(this);
    });
  if (output !== undefined) {
    // Commander's own error line is replaced by main's report (which knows about --json).
    root.configureOutput({ writeOut: output.writeOut, writeErr: output.writeErr, outputError: () => undefined, getOutHelpWidth: () => output.helpWidth ?? 80 });
  }
  for (const spec of branches) addCommand(root, spec, dispatch);
  return root;
}

/**
 * The top-level command a command line runs, when its first word names one and it asks for no
 * help: only that branch needs building. Otherwise (help, a flag first, an unknown or misspelt
 * command) the whole tree is built, for help and suggestions that name every command.
 */
export function branchOf(argv: readonly string[]): CommandSpec | undefined {
  if (argv.some((word) => word === '-h' || word === '--help')) return undefined;
  return programSpec.subcommands?.find((spec) => spec.name === argv[0]);
}

/**
 * The top-level branches a command line needs built: none for the program's own help (`taxprep`,
 * `taxprep --help`), which is made from the declarations alone (src/help/layout.ts), the one
 * `branchOf` names, or else all of them.
 */
export function branchesOf(argv: readonly string[]): readonly CommandSpec[] {
  if (argv.length === 0 || (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h'))) return [];
  const branch = branchOf(argv);
  return branch === undefined ? (programSpec.subcommands ?? []) : [branch];
}

/** The program's own flags, checked: a table-tested pure function of what commander parsed. */
export function parseGlobalOptions(raw: Record<string, unknown>): GlobalOptions {
  const globals: GlobalOptions = {
    json: raw.json === true || typeof raw.json === 'string' || typeof raw.jq === 'string',
    verbose: raw.verbose === true,
    color: raw.color !== false,
    retry: raw.retry !== false,
  };
  const jsonFields = jsonFieldsOf(raw.json);
  if (jsonFields !== undefined) globals.jsonFields = jsonFields;
  if (typeof raw.jq === 'string') globals.jq = raw.jq;
  if (typeof raw.profile === 'string') globals.profile = raw.profile;
  if (typeof raw.baseUrl === 'string') globals.baseUrl = raw.baseUrl;
  if (typeof raw.maxResponseSize === 'string') globals.maxResponseSize = raw.maxResponseSize;
  if (typeof raw.caFile === 'string') globals.caFile = raw.caFile;
  if (typeof raw.stateUrl === 'string') globals.stateUrl = checkStateUrlFlag(raw.stateUrl, '--state-url');
  if (typeof raw.timeout === 'string') {
    const rule = `must be ${durationRule()}, greater than 0${bareNumberNote(raw.timeout)}`;
    const timeoutMs = parseDuration(raw.timeout) ?? 0;
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

/**
 * `--json` (or `--jq`, or a list's `--ndjson`: a program reads that output too) decides the error
 * format even when parsing failed before commander read the flags.
 */
function asksForJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((word) => /^--(json|jq|ndjson)(=|$)/.test(word));
}

const FIELD_LIST = /^[a-z][a-z0-9_]*(,[a-z][a-z0-9_]*)*$/;

/**
 * `--json` takes the next word as its FIELDS only when that word reads as a field list and names
 * no command: `--json id,filename`, but `--json health`, `--json 1001` or `--json w2.pdf` keep
 * their word. Otherwise commander, seeing an optional value, would take the word whatever it is.
 * A command without fields that takes arguments keeps its word too (`profiles show --json acme`).
 */
function separateJsonFlag(argv: string[]): string[] {
  const commandNames = new Set(walk(programSpec).map(({ spec }) => spec.name));
  const end = argv.indexOf('--');
  return argv.map((word, index) => {
    if (word !== '--json' || (end !== -1 && index > end)) return word;
    const next = argv[index + 1] ?? '';
    const command = commandBefore(argv.slice(0, index));
    const argumentFirst = command !== undefined && command.jsonFields === undefined && (command.arguments ?? []).length > 0;
    return FIELD_LIST.test(next) && !commandNames.has(next) && !argumentFirst ? word : '--json=';
  });
}

/** The command the words name so far (`profiles show` in `profiles show --json`), if any. */
function commandBefore(words: readonly string[]): CommandSpec | undefined {
  let command: CommandSpec | undefined;
  let children = programSpec.subcommands ?? [];
  for (const word of words) {
    const child = children.find((spec) => spec.name === word);
    if (child === undefined) continue;
    command = child;
    children = child.subcommands ?? [];
  }
  return command;
}

/**
 * Runs taxprep and returns the exit code. Every failure is mapped here, in one place: a `CliError`
 * to its exit code, commander's usage errors to 2, anything else (a bug) to 1.
 */
export async function main(argv: string[], overrides: MainOverrides = {}): Promise<number> {
  const env = overrides.env ?? process.env;
  const stdout = overrides.io?.stdout ?? process.stdout;
  const stderr = overrides.io?.stderr ?? process.stderr;
  // Before anything runs: a shipped build never dies at a test's crash point.
  const refusal = RELEASE_BUILD ? refuseCrashPointsInRelease(env) : undefined;
  if (refusal !== undefined) {
    stderr.write(`error: ${refusal}\n`);
    return EXIT.USAGE;
  }
  let json = asksForJson(argv);
  let verbose = argv.includes('--verbose');
  let exitCode: number = EXIT.OK;
  let context: OwnedContext | undefined;

  const dispatch: Dispatch = async (load, raw) => {
    const globals = parseGlobalOptions(program.opts());
    json = globals.json || raw.flags.ndjson === true;
    verbose = globals.verbose;
    const module = await load();
    const options = module.parseOptions(raw);
    if (globals.jq !== undefined) await (await import('./output/jq')).checkJqExpression(globals.jq);
    const created = createIO({ env, color: globals.color, stdout, stderr, stdin: overrides.io?.stdin });
    // Not spread unless a test replaces parts: spreading would make the process's stdin (see createIO).
    const io = overrides.io === undefined ? created : { ...created, ...overrides.io };
    context = createContext({ io, env, globals, clock: overrides.clock, random: overrides.random });
    exitCode = (await module.run(context, options)) ?? EXIT.OK;
  };
  const program = buildProgram(
    dispatch,
    {
      writeOut: (text) => stdout.write(text),
      writeErr: (text) => stderr.write(text),
      helpWidth: (overrides.io?.stdoutIsTTY ?? (stdout as { isTTY?: boolean }).isTTY === true) ? (overrides.io?.columns ?? terminalColumns(stdout)) : undefined,
    },
    branchesOf(argv),
  );

  // Output that fails (a full disk, a reader gone) fails every later write too: the first failure
  // is kept here, so that a write nobody awaits (help, a last line) still ends the run with it.
  // The listener stays after `main` returns: the failure of a synchronous write is emitted a tick
  // later, and must not then become an uncaught exception.
  let failedOutput: Error | undefined;
  const onOutputError = (error: Error) => {
    failedOutput ??= error;
  };
  stdout.on('error', onOutputError);
  // Errors are JSON for programs; a person at a terminal reads them as text even with --json.
  const stderrIsTTY = overrides.io?.stderrIsTTY ?? (stderr as { isTTY?: boolean }).isTTY === true;
  let commandError: unknown;
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    commandError = error;
  } finally {
    await context?.close();
  }
  const outputError = commandError instanceof OutputError ? commandError : ((await outputFailure(stdout)) ?? (failedOutput && new OutputError(failedOutput)));
  // A command's own failure is reported as such; a failed output decides otherwise.
  const failure = outputError !== undefined && (endedWell(commandError) || commandError === outputError) ? outputError : commandError;
  // Text is wrapped at word boundaries on a terminal, where it would otherwise wrap inside words; JSON never.
  const jsonError = json && !stderrIsTTY;
  const stderrShape = { stderrIsTTY, columns: overrides.io?.columns ?? terminalColumns(stderr) };
  if (failure !== undefined) exitCode = reportError(failure, { write: (text) => stderr.write(jsonError ? text : wrapMessage(stderrShape, text)), json: jsonError, verbose });
  return exitCode;
}

/** Whether the command line ended well: commander ends help and `--version` by throwing. */
function endedWell(error: unknown): boolean {
  return error === undefined || (error instanceof CommanderError && (error.code === 'commander.helpDisplayed' || error.code === 'commander.version'));
}

/** Writes the one report of a failure on stderr and returns its exit code. */
export function reportError(error: unknown, out: { write(text: string): void; json: boolean; verbose: boolean }): number {
  if (error instanceof CommanderError) {
    if (endedWell(error)) return EXIT.OK;
    const message = error.message.replace(/^error: /, '');
    if (out.json) out.write(`${JSON.stringify({ error: { code: 'USAGE_ERROR', message: message.replace(/\n/g, ' ') } })}\n`);
    else out.write(`error: ${message}\nRun with --help for usage and examples.\n`);
    return EXIT.USAGE;
  }
  if (error instanceof OutputError) {
    if (!error.reported) return error.exitCode;
    if (out.json) out.write(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
    else out.write(`error: ${error.message}\n${error.hint}\n`);
    return error.exitCode;
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

/**
 * Initialises, without running anything, what every API command loads on first use: settings,
 * profiles, the output layer, the HTTP client (with the contract's schemas) and undici. The
 * single executable calls it while its start-up snapshot is made (src/sea/main.ts), so that its
 * runs start with them in memory. The commands' own modules are left to load when run: every run
 * deserialises every object of the snapshot, and with all of them it was 1.2 MB larger, which
 * cost `--help` 8 ms of CPU and `accounts get` 6 ms more than loading its own module saves
 * (`hooks listen` also loads node:http, whose parsers V8 cannot keep in a snapshot). What these modules read of the
 * machine as they load, the snapshot keeps from the build: src/sea/main.ts refuses reads of the
 * environment.
 */
export async function preloadModules(): Promise<void> {
  await Promise.all([
    import('./config/store'),
    import('./config/settings'),
    import('./config/learned'),
    import('./api/client'),
    import('./output/statusLine'),
    import('./output/table'),
    import('./output'),
    import('./api/undici').then(({ loadEnvHttpProxyAgent }) => loadEnvHttpProxyAgent()),
  ]);
}
