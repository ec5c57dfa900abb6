import type { Command, Help } from 'commander';
import { exitCodesOf } from '../commands/exitCodes';
import { flagHelp, HELP_FLAG, longName, VERSION_FLAG, type CommandSpec, type FlagSpec } from '../commands/spec';
import { wrapText } from '../output/wrap';
import { blocksOf, terminalText } from './blocks';

/**
 * Help laid out like the GitHub CLI's, from the declarations alone: a description, USAGE, the
 * commands (at the top, CORE COMMANDS with their descriptions and the ADDITIONAL COMMANDS by name,
 * so that it fits a 24-row screen), ARGUMENTS, FLAGS, INHERITED FLAGS (one line naming the
 * program's flags and `taxprep help flags`), EXAMPLES (continued after ` \` within the width),
 * JSON FIELDS, one line of EXIT CODES and notes (paragraphs, see blocks.ts). Wrapped at word
 * boundaries to the terminal's width (80 in a pipe). A command added to the tree falls into place;
 * `group: 'core'` puts a top-level command among the core ones.
 */

/** The declaration each commander command was built from (set by `describeCommand`). */
const declarations = new WeakMap<Command, CommandSpec>();

export function declareHelp(command: Command, spec: CommandSpec): void {
  declarations.set(command, spec);
}


export function formatHelp(command: Command, helper: Help): string {
  const width = Math.max(40, helper.helpWidth ?? 80);
  const spec = declarations.get(command);
  const root = rootOf(command);
  const rootSpec = declarations.get(root);
  if (spec === undefined || rootSpec === undefined) return helper.formatHelp(command, helper);
  const sections = command === root ? rootSections(spec, width) : commandSections(command, spec, rootSpec, width);
  const text = sections
    .filter((section): section is Section => section !== undefined)
    .map(([title, body, code]) => {
      const shown = code === true ? body : wrapText(body, width);
      return title === undefined ? shown : `${title}\n${shown}`;
    })
    .join('\n\n');
  return `${text}\n`;
}

/** A heading (none for the description and notes) and its text; `code`: command lines, or text laid out already. */
type Section = [title: string | undefined, body: string, code?: boolean];

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

function pathOf(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

function visible(specs: readonly CommandSpec[] | undefined): CommandSpec[] {
  return (specs ?? []).filter((sub) => !sub.hidden);
}

/** Aligned `term  text` rows, indented two spaces; wrapping continues under the text. */
function rows(entries: Array<[term: string, text: string]>): string {
  const termWidth = Math.max(...entries.map(([term]) => term.length));
  return entries.map(([term, text]) => `  ${term.padEnd(termWidth)}  ${text}`.trimEnd()).join('\n');
}

/** A command per row with its whole description: a long one wraps under itself, never cut. */
function commandRows(specs: CommandSpec[]): string {
  return rows(specs.map((sub) => [`${sub.name}:`, sub.description]));
}

function flagRows(flags: readonly FlagSpec[]): string {
  return rows(flags.map((flag) => [flag.flag, flagHelp(flag)]));
}

/** Shell words as typed: quoted strings kept whole with their quotes, `a"b c"d` one word. */
const SHELL_WORD = /(?:[^\s'"]+|'[^']*'|"(?:[^"\\]|\\.)*")+/g;

const OPERATOR = /^(\||\|\||&&|;|\d?>>?|<)$/;

/**
 * A command line's words in the groups a break should not split: a flag and its value
 * (`--tax-year 2024`), an operator and what follows it (`| jq -r`, `> out.json`).
 */
function unbreakable(words: readonly string[]): string[] {
  const groups: string[] = [];
  words.forEach((word, index) => {
    const [before, previous] = [words[index - 2], words[index - 1]];
    const glued =
      previous !== undefined &&
      (OPERATOR.test(previous) ||
        (previous.startsWith('-') && !word.startsWith('-') && !OPERATOR.test(word)) ||
        // A command after a pipe or `&&` keeps its first word: `| jq -r`, `| jq '.[].id'`.
        (before !== undefined && /^(\||\|\||&&)$/.test(before)));
    if (glued) groups[groups.length - 1] += ` ${word}`;
    else groups.push(word);
  });
  return groups;
}

/**
 * A command line within `width`, as gh and the aws docs break theirs: between shell words (never
 * between a flag and its value), each line but the last ending in ` \`, the next indented under
 * the command. It reads as one command when pasted into a shell, and the docs' parser joins it the
 * same way. A declaration may break its own lines with ` \`; they are joined first.
 */
function continuedLines(command: string, width: number, first: string, rest: string): string[] {
  const groups = unbreakable(command.replace(/\s*\\\n\s*/g, ' ').match(SHELL_WORD) ?? []);
  const lines: string[][] = [[]];
  const text = (line: readonly string[], index: number) => (index === 0 ? first : rest) + line.join(' ');
  groups.forEach((group, index) => {
    const line = lines.at(-1)!;
    // Room for ` \` unless this is the command's end.
    const room = index === groups.length - 1 ? width : width - 2;
    if (line.length === 0 || text([...line, group], lines.length - 1).length <= room) return void line.push(group);
    // A break goes before the line's last pipe or `&&` when what follows it fits the next line.
    const at = line.findLastIndex((each, position) => position > 0 && /^(\||\|\||&&) /.test(each));
    const moved = at === -1 ? [] : line.slice(at);
    if (moved.length > 0 && text([...moved, group], 1).length <= room) line.splice(at);
    lines.push(moved.length > 0 && line.length === at ? [...moved, group] : [group]);
  });
  return lines.map((line, index) => `${text(line, index)}${index === lines.length - 1 ? '' : ' \\'}`);
}

/**
 * Example command lines, `$ ` first, within `width`: a trailing `# comment` that would take the
 * line past it goes on a line of its own above its command, and a command still too long goes on
 * continuation lines (`continuedLines`).
 */
export function exampleLines(examples: readonly string[], width: number, indent = ''): string[] {
  return examples.flatMap((example) => {
    const comment = /^(.*?\S)\s+(# .*)$/.exec(example);
    const oneLine = example.replace(/\s*\\\n\s*/g, ' ');
    if (`${indent}$ ${oneLine}`.length <= width) return [`${indent}$ ${oneLine}`];
    const above = comment === null ? [] : [`${indent}${comment[2]}`];
    return [...above, ...continuedLines(comment === null ? example : comment[1]!, width, `${indent}$ `, `${indent}    `)];
  });
}

function examplesOf(spec: CommandSpec, width: number): Section | undefined {
  return spec.examples?.length ? ['EXAMPLES', exampleLines(spec.examples, width, '  ').join('\n'), true] : undefined;
}

function rootSections(spec: CommandSpec, width: number): Array<Section | undefined> {
  const commands = visible(spec.subcommands);
  const core = commands.filter((sub) => sub.group === 'core');
  const flags = [...(spec.flags ?? []).filter((flag) => !flag.setting), HELP_FLAG, VERSION_FLAG].map(longName);
  // `help` and `version` are there as --help and --version already: one row saved for 24.
  const additional = commands.filter((sub) => sub.group !== 'core' && !flags.includes(`--${sub.name}`));
  return [
    [undefined, spec.description],
    ['USAGE', `  ${spec.name} <command> [subcommand] [flags]`],
    core.length > 0 ? ['CORE COMMANDS', commandRows(core)] : undefined,
    additional.length > 0 ? ['ADDITIONAL COMMANDS', `  ${additional.map((sub) => sub.name).join(', ')}`] : undefined,
    ['FLAGS (every command takes them, and the settings in taxprep help flags)', `  ${flags.join(', ')}`],
    examplesOf(spec, width),
  ];
}

/** The USAGE lines of a command: how it runs (required flags shown), and how its subcommands do. */
export function usageLines(path: string, spec: CommandSpec): string[] {
  const usage: string[] = [];
  if (spec.load !== undefined) {
    const required = (spec.flags ?? []).filter((flag) => flag.required).map((flag) => flag.flag.replace(/^-\w, /, ''));
    usage.push([path, ...(spec.arguments ?? []).map((argument) => argument.name), ...required, '[flags]'].join(' '));
  }
  if (visible(spec.subcommands).length > 0) usage.push(`${path} <command> [flags]`);
  return usage;
}

/** `0-9, 11, 12, 74`: numbers in order, three or more in a row as a range. */
function numberRanges(numbers: readonly number[]): string {
  const sorted = [...new Set(numbers)].sort((a, b) => a - b);
  const runs: number[][] = [];
  for (const number of sorted) {
    const run = runs.at(-1);
    if (run !== undefined && run.at(-1) === number - 1) run.push(number);
    else runs.push([number]);
  }
  return runs.flatMap((run) => (run.length >= 3 ? [`${run[0]}-${run.at(-1)}`] : run.map(String))).join(', ');
}

function commandSections(command: Command, spec: CommandSpec, rootSpec: CommandSpec, width: number): Array<Section | undefined> {
  const commands = visible(spec.subcommands);
  const usage = usageLines(pathOf(command), spec);
  const own = new Set((spec.flags ?? []).map(longName));
  const inherited = [HELP_FLAG, ...(rootSpec.flags ?? [])].map(longName).filter((name) => !own.has(name));
  const argumentRows = (spec.arguments ?? []).map((argument): [string, string] => [
    argument.name,
    argument.values ? `${argument.help}: ${argument.values.join(', ')}` : argument.help,
  ]);
  return [
    [undefined, spec.description],
    ['USAGE', usage.map((line) => `  ${line}`).join('\n')],
    commands.length > 0 ? ['COMMANDS', commandRows(commands)] : undefined,
    argumentRows.length > 0 ? ['ARGUMENTS', rows(argumentRows)] : undefined,
    spec.flags?.length ? ['FLAGS', flagRows(spec.flags)] : undefined,
    // One line, as gh does: the program's flags are the same in every command (`taxprep help flags`).
    ['INHERITED FLAGS', `  ${inherited.slice(0, 4).join(', ')} and ${inherited.length - 4} more: see \`taxprep help flags\``],
    examplesOf(spec, width),
    spec.jsonFields ? ['JSON FIELDS (--json FIELD,...)', `  ${spec.jsonFields.join(', ')}`] : undefined,
    // One line, so that help still fits a screen; what each code means here is in the man page and docs/commands/.
    [undefined, `EXIT CODES: ${numberRanges(exitCodesOf(spec).map((row) => row.code))} (taxprep help exit-codes)`],
    spec.notes === undefined ? undefined : [undefined, terminalText(blocksOf(spec.notes), width), true],
  ];
}
