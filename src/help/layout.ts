import type { Command, Help } from 'commander';
import { flagHelp, longName, type CommandSpec, type FlagSpec } from '../commands/spec';
import { wrapText } from '../output/wrap';

/**
 * Help laid out like the GitHub CLI's, from the declarations alone: a description, USAGE, the
 * commands (at the top, CORE COMMANDS with their descriptions and the ADDITIONAL COMMANDS by name,
 * so that it fits a 24-row screen), ARGUMENTS, FLAGS, INHERITED FLAGS (the program's, in every
 * command's help), EXAMPLES, JSON FIELDS and notes. Wrapped at word boundaries to the terminal's
 * width (80 in a pipe). A command added to the tree falls into place; `group: 'core'` puts a
 * top-level command among the core ones.
 */

/** The declaration each commander command was built from (set by `describeCommand`). */
const declarations = new WeakMap<Command, CommandSpec>();

export function declareHelp(command: Command, spec: CommandSpec): void {
  declarations.set(command, spec);
}

const HELP_FLAG: FlagSpec = { flag: '-h, --help', help: 'show help for a command' };
const VERSION_FLAG: FlagSpec = { flag: '-V, --version', help: 'print the version' };

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

/** A heading (none for the description and notes) and its text; `code`: command lines, never wrapped. */
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

/**
 * A description short enough for one line of a command list: the whole of it when it fits,
 * otherwise its longest lead before a `:`, `;`, `(` or `,` that fits (wrapped if none does).
 */
function summary(description: string, room: number): string {
  if (description.length <= room) return description;
  const leads = [...description.matchAll(/[:;,]\s|\s\(/g)].map((match) => description.slice(0, match.index).trimEnd());
  return leads.filter((lead) => lead.length <= room && lead.length > 0).at(-1) ?? description;
}

function commandRows(specs: CommandSpec[], width: number): string {
  const nameWidth = Math.max(...specs.map((sub) => sub.name.length)) + 1;
  const room = width - 2 - nameWidth - 2;
  return rows(specs.map((sub) => [`${sub.name}:`, summary(sub.description, room)]));
}

function flagRows(flags: readonly FlagSpec[]): string {
  return rows(flags.map((flag) => [flag.flag, flagHelp(flag)]));
}

function examplesOf(spec: CommandSpec): Section | undefined {
  return spec.examples?.length ? ['EXAMPLES', spec.examples.map((line) => `  $ ${line}`).join('\n'), true] : undefined;
}

function rootSections(spec: CommandSpec, width: number): Array<Section | undefined> {
  const commands = visible(spec.subcommands);
  const core = commands.filter((sub) => sub.group === 'core');
  const flags = [...(spec.flags ?? []), HELP_FLAG, VERSION_FLAG].map(longName);
  // `help` and `version` are there as --help and --version already: one row saved for 24.
  const additional = commands.filter((sub) => sub.group !== 'core' && !flags.includes(`--${sub.name}`));
  return [
    [undefined, spec.description],
    ['USAGE', `  ${spec.name} <command> [subcommand] [flags]`],
    core.length > 0 ? ['CORE COMMANDS', commandRows(core, width)] : undefined,
    additional.length > 0 ? ['ADDITIONAL COMMANDS', `  ${additional.map((sub) => sub.name).join(', ')}`] : undefined,
    ['FLAGS (every command takes them; its help explains each)', `  ${flags.join(', ')}`],
    examplesOf(spec),
  ];
}

function commandSections(command: Command, spec: CommandSpec, rootSpec: CommandSpec, width: number): Array<Section | undefined> {
  const path = pathOf(command);
  const commands = visible(spec.subcommands);
  const usage: string[] = [];
  if (spec.load !== undefined) {
    const required = (spec.flags ?? []).filter((flag) => flag.required).map((flag) => flag.flag.replace(/^-\w, /, ''));
    usage.push([path, ...(spec.arguments ?? []).map((argument) => argument.name), ...required, '[flags]'].join(' '));
  }
  if (commands.length > 0) usage.push(`${path} <command> [flags]`);
  const own = new Set((spec.flags ?? []).map(longName));
  const inherited = [...(rootSpec.flags ?? []).filter((flag) => !own.has(longName(flag))), HELP_FLAG];
  const argumentRows = (spec.arguments ?? []).map((argument): [string, string] => [
    argument.name,
    argument.values ? `${argument.help}: ${argument.values.join(', ')}` : argument.help,
  ]);
  return [
    [undefined, spec.description],
    ['USAGE', usage.map((line) => `  ${line}`).join('\n')],
    commands.length > 0 ? ['COMMANDS', commandRows(commands, width)] : undefined,
    argumentRows.length > 0 ? ['ARGUMENTS', rows(argumentRows)] : undefined,
    spec.flags?.length ? ['FLAGS', flagRows(spec.flags)] : undefined,
    ['INHERITED FLAGS', flagRows(inherited)],
    examplesOf(spec),
    spec.jsonFields ? ['JSON FIELDS (--json FIELD,...)', `  ${spec.jsonFields.join(', ')}`] : undefined,
    spec.notes === undefined ? undefined : [undefined, spec.notes],
  ];
}
