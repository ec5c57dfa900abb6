import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli';
import { flagHelp, longName, takesValue, walk, type CommandSpec, type FlagSpec } from '../../src/commands/spec';
import { program as tree } from '../../src/commands/tree';
import {
  Account,
  CreatedAccount,
  Deliverable,
  DeliverableListItem,
  Document,
  DocumentListItem,
  HealthRecord,
  LoginLinkRecord,
  ProjectListItem,
  ProjectStatusRecord,
} from '../../src/contract';
import { argvOf, refusal } from '../helpers/commandLines';

/**
 * The declarations against the contract: every value, range and length a flag's help documents
 * is what its validation (the contract's zod schema, through the flag -> field mapping) accepts,
 * and nothing it does not document is an enum.
 */

const commands = walk(tree).filter(({ spec }) => spec.load !== undefined);

/** A valid value of the flag, where the declaration gives one. */
function validValue(flag: FlagSpec): string[] | undefined {
  if (!takesValue(flag)) return [];
  if (flag.values) return [flag.values[0]!];
  if (flag.range) return [String(flag.range.min)];
  return flag.maxCharacters === undefined ? undefined : ['x'];
}

/**
 * The first of the command's examples that parses with the flag added (given last, the flag's
 * value replaces one the example may give).
 */
async function baselineOf(path: string[], spec: CommandSpec, flag: FlagSpec): Promise<string[]> {
  const value = validValue(flag);
  for (const argv of (spec.examples ?? []).map(argvOf)) {
    if (argv === undefined || (await refusal(argv)) !== undefined) continue;
    if (value === undefined || (await refusal([...argv, longName(flag), ...value])) === undefined) return argv;
  }
  throw new Error(`taxprep ${path.join(' ')} has no example that parses with ${longName(flag)}`);
}

const checked = commands.flatMap(({ path, spec }) =>
  (spec.flags ?? []).filter((flag) => flag.field !== undefined).map((flag) => ({ name: `${path.join(' ')} ${longName(flag)}`, path, spec, flag })),
);

describe('each flag against the contract', () => {
  it.each(checked)('$name', async ({ path, spec, flag }) => {
    const base = await baselineOf(path, spec, flag);
    const withValue = (value: string) => [...base, longName(flag), value];
    const refusedFor = async (value: string) => (await refusal(withValue(value)))?.details?.[longName(flag)];
    if (!takesValue(flag)) return expect(await refusal([...base, longName(flag)])).toBeUndefined();

    for (const value of flag.values ?? []) expect(await refusal(withValue(value)), value).toBeUndefined();
    const enumRule = await refusedFor('zz_not_a_value');
    if (flag.valuesOpen) expect(enumRule, 'a value the contract lists without refusing others is sent').toBeUndefined();
    else if (flag.values) expect(enumRule).toEqual([`must be one of: ${flag.values.join(', ')}`]);
    else expect(String(enumRule), 'the contract has values for this flag: declare them').not.toMatch(/must be one of/);

    if (flag.range) {
      for (const value of [flag.range.min, flag.range.max]) expect(await refusal(withValue(String(value))), String(value)).toBeUndefined();
      for (const value of [flag.range.min - 1, flag.range.max + 1]) expect(await refusedFor(String(value)), String(value)).toBeDefined();
    }
    if (flag.maxCharacters !== undefined) {
      expect(await refusal(withValue('x'.repeat(flag.maxCharacters)))).toBeUndefined();
      expect(await refusedFor('x'.repeat(flag.maxCharacters + 1))).toEqual([`must be at most ${flag.maxCharacters} characters`]);
    }
  });

  it('the program flag --max-retries documents its range', async () => {
    const maxRetries = tree.flags!.find((flag) => longName(flag) === '--max-retries')!;
    expect(await refusal(['--max-retries', String(maxRetries.range!.max), 'health'])).toBeUndefined();
    expect((await refusal(['--max-retries', String(maxRetries.range!.max + 1), 'health']))?.details?.['--max-retries']).toBeDefined();
  });

  it('every flag with a rule says it in --help, as generated from the declaration', () => {
    const program = buildProgram(async () => undefined);
    const withRules = commands.flatMap(({ path, spec }) => (spec.flags ?? []).filter(hasRule).map((flag) => ({ path, flag })));
    expect(withRules.length).toBeGreaterThan(10);
    for (const { path, flag } of withRules) {
      const command = path.reduce((parent, name) => parent.commands.find((sub) => sub.name() === name)!, program);
      const help = command.helpInformation().replace(/\s+/g, ' ');
      expect(help).toContain(flagHelp(flag).replace(/\s+/g, ' '));
      for (const value of flag.values ?? []) expect(help).toContain(value);
      if (flag.range) expect(help).toContain(`${flag.range.min}-${flag.range.max}`);
    }
  });
});

function hasRule(flag: FlagSpec): boolean {
  return flag.values !== undefined || flag.range !== undefined || flag.maxCharacters !== undefined;
}

describe('--json FIELDS of each command are the fields of its contract document', () => {
  const shapes: Record<string, { shape: Record<string, unknown> }> = {
    health: HealthRecord,
    'accounts create': CreatedAccount,
    'accounts get': Account,
    'docs upload': Document,
    'docs list': DocumentListItem,
    'docs get': Document,
    'projects list': ProjectListItem,
    'projects status': ProjectStatusRecord,
    'deliverables list': DeliverableListItem,
    'deliverables get': Deliverable,
  };
  const declaring = commands.filter(({ spec }) => spec.jsonFields !== undefined).map(({ path, spec }) => ({ name: path.join(' '), spec }));

  it.each(declaring)('$name', ({ name, spec }) => {
    const record = name === 'login-link' ? LoginLinkRecord : shapes[name];
    expect(record, `no contract document named for ${name}`).toBeDefined();
    const batchLineFields = name === 'login-link' ? ['input', 'error', 'skipped'] : [];
    expect([...spec.jsonFields!].sort()).toEqual([...Object.keys(record!.shape), ...batchLineFields].sort());
  });
});

describe("the declarations' examples", () => {
  const lines = walk(tree)
    .flatMap(({ spec }) => spec.examples ?? [])
    .filter((line) => argvOf(line) !== undefined);

  it.each(lines)('%s', async (line) => {
    expect(await refusal(argvOf(line)!)).toBeUndefined();
  });
});
