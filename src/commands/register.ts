import { Argument, Option, type Command } from 'commander';
import { UsageError } from '../errors';
import { jsonFieldsOf } from '../output/json';
import { declareHelp } from '../help/layout';
import { attributeOf, flagHelp, type CommandSpec, type FlagSpec } from './spec';
import type { Dispatch } from './types';

const collect = (value: string, previous: string[] = []) => [...previous, value];

function optionOf(flag: FlagSpec): Option {
  const option = new Option(flag.flag, flagHelp(flag));
  return flag.repeatable ? option.argParser(collect) : option;
}

/** Description, arguments and flags of `spec` on an existing commander command; its help comes from `spec` (src/help/layout.ts). */
export function describeCommand(command: Command, spec: CommandSpec): Command {
  command.description(spec.description);
  for (const argument of spec.arguments ?? []) {
    const declared = new Argument(argument.name, argument.help);
    command.addArgument(argument.values ? declared.choices(argument.values) : declared);
  }
  for (const flag of spec.flags ?? []) command.addOption(optionOf(flag));
  declareHelp(command, spec);
  return command;
}

/**
 * The one commander action of every command: the positional arguments and the command's own
 * flags go to `dispatch`, which imports the module only now. A flag an ancestor also defines
 * (`profiles add --base-url`) reaches the ancestor wherever it is typed, so it is read from there.
 */
function runAction(spec: CommandSpec, dispatch: Dispatch) {
  return function (this: Command): Promise<void> {
    refuseParentFlags(this, spec);
    const given = this.optsWithGlobals();
    const flags = Object.fromEntries((spec.flags ?? []).map((flag) => [attributeOf(flag), given[attributeOf(flag)]]));
    const fields = jsonFieldsOf(given.json);
    if (fields !== undefined) checkJsonFields(spec, fields);
    return dispatch(spec.load!, { args: this.processedArgs, flags });
  };
}

/**
 * Commander hands every flag `login-link` knows to `login-link`, even when typed after
 * `login-link ledger`; a subcommand takes only the flags it declares, and refuses the rest as
 * commander refuses any unknown flag (with its "Did you mean" suggestion).
 */
function refuseParentFlags(command: Command, spec: CommandSpec): void {
  const own = new Set((spec.flags ?? []).map(attributeOf));
  const parent = command.parent;
  if (parent?.parent == null) return;
  for (const option of parent.options) {
    const key = option.attributeName();
    if (own.has(key) || parent.getOptionValueSource(key) !== 'cli') continue;
    // Commander's own report; not part of its typed API.
    (command as unknown as { unknownOption(flag: string): never }).unknownOption(option.long ?? option.flags);
  }
}

/**
 * A command that only groups subcommands, typed alone (`taxprep projects`), prints its help on
 * stdout: help that was asked for. A word that names no subcommand stays an unknown command.
 */
export function groupAction(this: Command): void {
  if (this.args.length > 0) {
    // Commander's own report, with its "Did you mean" suggestion; not part of its typed API.
    (this as unknown as { unknownCommand(): never }).unknownCommand();
  }
  this.outputHelp();
}

/** Adds `spec` and its subcommands under `parent`. */
export function addCommand(parent: Command, spec: CommandSpec, dispatch: Dispatch): Command {
  const command = describeCommand(parent.command(spec.name, { hidden: spec.hidden === true }), spec);
  if (spec.load) command.action(runAction(spec, dispatch));
  else command.allowExcessArguments(true).action(groupAction);
  // `login-link`: commander then suggests, for a subcommand's unknown flag, only that subcommand's
  // own flags, not also `login-link`'s (which `refuseParentFlags` refuses there).
  if (spec.load && spec.subcommands) command.enablePositionalOptions();
  for (const sub of spec.subcommands ?? []) addCommand(command, sub, dispatch);
  return command;
}

/** Checks `--json FIELDS` against the fields the command declares, before anything runs. */
function checkJsonFields(spec: CommandSpec, fields: readonly string[]): void {
  const known = spec.jsonFields ?? [];
  if (known.length === 0) {
    const rule = `takes no fields with ${spec.name}: --json alone prints its whole output as JSON`;
    throw new UsageError(`--json ${rule} ("${fields.join(',')}" was read as fields)`, { details: { '--json': [rule] } });
  }
  const unknown = fields.filter((field) => !known.includes(field));
  if (unknown.length > 0) {
    const rule = `unknown field${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}; available: ${known.join(', ')}`;
    throw new UsageError(`--json ${rule}`, { details: { '--json': [rule] } });
  }
}
