import { exitCodesOf } from '../../src/commands/exitCodes';
import { flagNames, type CommandSpec, type FlagSpec } from '../../src/commands/spec';
import { program } from '../../src/commands/tree';

/**
 * Holds every run of taxprep in the tests to the exit codes its command declares (`exitCodes` in
 * its register.ts, listed in its man page and docs/commands/ page): test/helpers/cli.ts checks the
 * code of every run it makes, so the whole end-to-end suite proves the lists.
 */

const FIELD_LIST = /^[a-z][a-z0-9_]*(,[a-z][a-z0-9_]*)*$/;

/**
 * The command that argv runs: the deepest declaration its words name, as commander finds it (a
 * subcommand is the first word after its parent that is not a flag or a flag's value).
 */
export function commandOf(root: CommandSpec, argv: readonly string[]): { path: string[]; spec: CommandSpec } {
  let spec = root;
  const path: string[] = [];
  let flags: FlagSpec[] = [...(root.flags ?? [])];
  let operands = 0;
  for (let index = 0; index < argv.length; index += 1) {
    const word = argv[index]!;
    if (word === '--') break;
    if (word.startsWith('-') && word !== '-') {
      if (word.includes('=')) continue;
      const flag = flags.find((candidate) => flagNames(candidate).includes(word));
      const next = argv[index + 1];
      if (flag === undefined || next === undefined) continue;
      // A value flag takes the next word; `--json [fields]` only a field list that names no command.
      if (/ </.test(flag.flag) || (/ \[/.test(flag.flag) && FIELD_LIST.test(next) && !(spec.subcommands ?? []).some((sub) => sub.name === next))) index += 1;
      continue;
    }
    const child = operands === 0 ? (spec.subcommands ?? []).find((sub) => sub.name === word) : undefined;
    if (child === undefined) {
      operands += 1;
      continue;
    }
    spec = child;
    path.push(word);
    flags = [...flags, ...(child.flags ?? [])];
  }
  return { path, spec };
}

/** Why `exitCode` (of a run of taxprep with argv) breaks its command's declaration, or undefined when it is declared. */
export function undeclaredExit(root: CommandSpec, argv: readonly string[], exitCode: number): string | undefined {
  const { path, spec } = commandOf(root, argv);
  const declared = exitCodesOf(spec).map((row) => row.code);
  if (declared.includes(exitCode)) return undefined;
  return `\`${['taxprep', ...path].join(' ')}\` ended with exit ${exitCode}, which its declaration does not list (it lists ${declared.join(', ')}): add it to exitCodes in its register.ts, or fix the code`;
}

/** Throws when a run of the real taxprep ended with an exit code its command does not declare. */
export function expectDeclaredExit(argv: readonly string[], exitCode: number): void {
  // -1: a signal ended the process (a crash point, a kill), not taxprep's own choice of code.
  if (exitCode === -1) return;
  const problem = undeclaredExit(program, argv, exitCode);
  if (problem !== undefined) throw new Error(problem);
}
