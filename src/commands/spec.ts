import type { ExitCodeSpec } from './exitCodes';
import type { CommandModule } from './types';

/**
 * One declaration per command: what `--help`, validation (flag -> contract field), shell
 * completions, man pages and docs/commands/ are all derived from. Declarations are plain data
 * (no zod, no commander), so building the command tree and printing help load nothing heavy.
 */

/** What a shell completes for a flag's value or an argument: file names, stored profile names, or help topics and commands. */
export type Completion = 'files' | 'profiles' | 'help';

export interface FlagSpec {
  /** Commander's syntax: `--limit <n>`, `-q, --query <key=value>`, `--no-notify`. */
  flag: string;
  help: string;
  /** The request field the value is checked and sent as, dotted when nested (`spouse.email`). */
  field?: string;
  /** The values the contract accepts (from src/contract/vocabulary.ts): listed in help and completions. */
  values?: readonly string[];
  /**
   * The contract lists `values` but does not say that others are refused: they are offered in help
   * and completions, and any other is sent as given for the service to decide.
   */
  valuesOpen?: boolean;
  /** The integer range accepted. */
  range?: { readonly min: number; readonly max: number };
  maxCharacters?: number;
  /** Shown as `(default ...)`. */
  default?: string;
  /** The flag may be given more than once; its values arrive as an array. */
  repeatable?: boolean;
  complete?: Completion;
  /** The command cannot run without it: shown in the usage line and marked `(required)`. */
  required?: boolean;
  /**
   * A program flag for settings rarely typed (time-outs, trust, the shared store): listed by
   * `taxprep help flags` and every command's help, left out of the top-level help's one line.
   */
  setting?: boolean;
}

export interface ArgumentSpec {
  /** Commander's syntax: `<account-id>`, `[name]`, `<file...>`. */
  name: string;
  help: string;
  /** The only values accepted (commander refuses others). */
  values?: readonly string[];
  complete?: Completion;
}

export interface CommandSpec {
  name: string;
  description: string;
  arguments?: readonly ArgumentSpec[];
  flags?: readonly FlagSpec[];
  /** Command lines shown under "Examples:" (without the `$ `). */
  examples?: readonly string[];
  /** Text after the examples. */
  notes?: string;
  /**
   * The fields `--json FIELDS` may select: of each item for a list, of the document otherwise.
   * Absent: the command prints no document that fields could be picked from.
   */
  jsonFields?: readonly string[];
  /**
   * The exit codes the command can end with besides those of every command (0, 1, 2, 74, 141),
   * by name in EXIT: usually `SERVICE_WITH_KEY` (src/commands/exitCodes.ts) and its own. Listed in
   * its man page, docs/commands/ page and help; the end-to-end tests fail on a code not listed.
   */
  exitCodes?: readonly ExitCodeSpec[];
  /** The command's module, imported only when it runs. Absent: a noun that groups subcommands. */
  load?: () => Promise<CommandModule<unknown>>;
  subcommands?: readonly CommandSpec[];
  /** Left out of help, completions and the docs (internal helpers such as `__complete`). */
  hidden?: boolean;
  /**
   * `core`: a top-level command listed with its description under CORE COMMANDS in `taxprep
   * --help` (the service's nouns). Others are listed by name under ADDITIONAL COMMANDS.
   */
  group?: 'core';
}

/** The flags commander itself adds to the program (every command takes `--help`). */
export const HELP_FLAG: FlagSpec = { flag: '-h, --help', help: 'show help for a command' };
export const VERSION_FLAG: FlagSpec = { flag: '-V, --version', help: 'print the version' };

/** `a, b or c`. */
function listOr(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

/** A flag's help line: its text, then the rule it is checked against, then its default. */
export function flagHelp(flag: FlagSpec): string {
  let text = flag.help;
  if (flag.values) text += flag.valuesOpen ? `, such as ${listOr(flag.values)} (others are sent as given)` : `: ${listOr(flag.values)}`;
  if (flag.range) text += `, ${flag.range.min}-${flag.range.max}`;
  if (flag.maxCharacters !== undefined) text += ` (at most ${flag.maxCharacters} characters)`;
  if (flag.repeatable) text += ' (repeatable)';
  if (flag.required) text += ' (required)';
  if (flag.default !== undefined) text += ` (default ${flag.default})`;
  return text;
}

/** `--spouse-email` of `--spouse-email <email>`, `-q` of `-q <key=value>`. */
export function longName(flag: FlagSpec): string {
  return /--[\w-]+/.exec(flag.flag)?.[0] ?? flag.flag.split(/[ ,]/)[0]!;
}

export function flagNames(flag: FlagSpec): string[] {
  return flag.flag.split(/[ ,]+/).filter((word) => word.startsWith('-'));
}

export function takesValue(flag: FlagSpec): boolean {
  return /[<[]/.test(flag.flag);
}

function isNegated(flag: FlagSpec): boolean {
  return longName(flag).startsWith('--no-');
}

/** The key commander stores a flag under: `--first-name` -> `firstName`, `--no-notify` -> `notify`. */
export function attributeOf(flag: FlagSpec): string {
  return longName(flag)
    .replace(/^--?(no-)?/, '')
    .replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * The request fields the given flags set, nested at their dotted paths: a value flag when given, a
 * switch only when it changes something (`--partner-branded` -> true, `--no-notify` -> false).
 */
export function fieldsOfFlags(specs: readonly FlagSpec[], flags: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const spec of specs) {
    if (spec.field === undefined) continue;
    const value = flags[attributeOf(spec)];
    const given = takesValue(spec) ? value !== undefined : isNegated(spec) ? value === false : value === true;
    if (!given) continue;
    const path = spec.field.split('.');
    let target = input;
    for (const key of path.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
    target[path.at(-1)!] = value;
  }
  return input;
}

/** Request field (and each parent of a nested one) -> the flag a message about it should name. */
export function flagOfField(specs: readonly FlagSpec[]): Record<string, string> {
  const names: Record<string, string> = {};
  for (const spec of specs) {
    if (spec.field === undefined) continue;
    const path = spec.field.split('.');
    for (let depth = 1; depth < path.length; depth += 1) names[path.slice(0, depth).join('.')] ??= longName(spec);
    names[spec.field] = longName(spec);
  }
  return names;
}

/** Every command of a tree with the words that lead to it (`['docs', 'upload']`), depth first. */
export function walk(spec: CommandSpec, path: string[] = []): Array<{ path: string[]; spec: CommandSpec }> {
  return [{ path, spec }, ...(spec.subcommands ?? []).filter((sub) => !sub.hidden).flatMap((sub) => walk(sub, [...path, sub.name]))];
}
