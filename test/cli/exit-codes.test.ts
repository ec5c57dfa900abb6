import { describe, expect, it } from 'vitest';
import { exitCodesOf } from '../../src/commands/exitCodes';
import { manPages } from '../../src/commands/man';
import { markdownPages } from '../../src/commands/markdown';
import { walk, type CommandSpec } from '../../src/commands/spec';
import { program } from '../../src/commands/tree';
import { EXIT, EXIT_CODE_MEANINGS } from '../../src/errors';
import { runCli } from '../helpers/cli';
import { pipedOutput } from '../helpers/commandLines';
import { commandOf, expectDeclaredExit, undeclaredExit } from '../helpers/exitCodes';

/**
 * Each command's declaration records the exit codes it can end with (issue 25); its man page, its
 * docs/commands/ page and its help list them from there. test/helpers/cli.ts holds every run of
 * the tests to them, so these lists cannot claim less than the commands do.
 */


const commands = walk(program).slice(1);
const runnable = commands.filter(({ spec }) => spec.load !== undefined);

describe('every command declares its exit codes', () => {
  it('each command that runs has an exitCodes list (empty when it adds nothing to those of every command)', () => {
    expect(runnable.filter(({ spec }) => spec.exitCodes === undefined).map(({ path }) => path.join(' '))).toEqual([]);
  });

  it('every declared code is in EXIT, has a meaning, and is a row of `taxprep help exit-codes`', async () => {
    const topic = await pipedOutput(['help', 'exit-codes']);
    const listed = new Set([...topic.matchAll(/^ {2}(\d+) {2,}\S/gm)].map((match) => Number(match[1])));
    const meanings = new Map(EXIT_CODE_MEANINGS);
    for (const { path, spec } of commands) {
      for (const { code, name, meaning } of exitCodesOf(spec)) {
        const where = `${path.join(' ')}: ${name}`;
        expect(EXIT[name], where).toBe(code);
        expect(meanings.has(name), where).toBe(true);
        expect(meaning.length, where).toBeGreaterThan(0);
        expect(listed.has(code), where).toBe(true);
      }
    }
    // And the topic names every code EXIT has, each once per meaning.
    expect([...listed].sort((a, b) => a - b)).toEqual([...new Set(Object.values(EXIT))].sort((a, b) => a - b));
  });

  it('the codes of every command, and a command\'s own with the meaning it gives them', () => {
    const codes = (path: string) => exitCodesOf(commands.find((command) => command.path.join(' ') === path)!.spec).map((row) => row.code);
    expect(codes('profiles list')).toEqual([0, 1, 2, 74, 141]);
    expect(codes('docs upload')).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 74, 130, 141]);
    expect(codes('hooks deliver')).toEqual([0, 1, 2, 9, 10, 74, 130, 141]);
    const status = exitCodesOf(commands.find((command) => command.path.join(' ') === 'projects status')!.spec);
    expect(status.filter((row) => row.code === 8).map((row) => row.name)).toEqual(['SERVER', 'STILL_PENDING']);
  });
});

describe('the lists are rendered from the declarations', () => {
  const uploadSpec = commands.find(({ path }) => path.join(' ') === 'docs upload')!.spec;

  it('docs/commands/: an Exit codes table of code, name and meaning in this command', () => {
    const page = markdownPages(program).find((each) => each.file === 'taxprep-docs-upload.md')!.text;
    const table = page.slice(page.indexOf('## Exit codes'), page.indexOf('## See also'));
    expect(table).toContain('| Code | Name | Meaning |');
    for (const { code, name } of exitCodesOf(uploadSpec)) expect(table).toMatch(new RegExp(`^\\| ${code} \\| \`${name}\` \\| `, 'm'));
    expect(table).toContain('| 9 | `PARTIAL` | of several files, some were refused and the others uploaded |');
    expect(table).not.toContain('`LOCKED`');
  });

  it('man: an EXIT STATUS section with each code and its meaning', () => {
    const page = manPages(program, '0.0.0').find((each) => each.file === 'taxprep-hooks-deliver.1')!.text;
    const section = page.slice(page.indexOf('.SH EXIT STATUS'), page.indexOf('.SH EXAMPLES'));
    expect([...section.matchAll(/^\.TP\n\\fB(\d+)\\fR$/gm)].map((match) => Number(match[1]))).toEqual([0, 1, 2, 9, 10, 74, 130, 141]);
    expect(section).toContain('another hooks command (not a watch) held the outbox for 2 seconds; nothing was sent');
  });

  it('--help: one line of codes (three or more in a row as a range), pointing at the topic', async () => {
    expect(await pipedOutput(['hooks', 'deliver', '--help'])).toContain('\n\nEXIT CODES: 0-2, 9, 10, 74, 130, 141 (taxprep help exit-codes)\n');
    expect(await pipedOutput(['docs', 'upload', '--help'])).toContain('\n\nEXIT CODES: 0-9, 11, 12, 74, 130, 141 (taxprep help exit-codes)\n');
  });
});

describe('a run that ends with a code its command does not declare fails its test', () => {
  it('finds the command that argv runs: through global flags and their values, not into arguments', () => {
    const path = (argv: string[]) => commandOf(program, argv).path.join(' ');
    expect(path(['--json', 'accounts', 'get', '1001'])).toBe('accounts get');
    expect(path(['--profile', 'docs', 'accounts', 'get', '1001'])).toBe('accounts get');
    expect(path(['docs', 'list', '1001', '--json', 'id,filename'])).toBe('docs list');
    expect(path(['--json', 'id', 'docs', 'list', '1001'])).toBe('docs list');
    expect(path(['help', 'docs', 'upload'])).toBe('help');
    expect(path(['login-link', 'renew', '--from', 'clients.csv'])).toBe('login-link renew');
    expect(path(['login-link', '1001', 'renew'])).toBe('login-link');
    expect(path(['acounts', 'get'])).toBe('');
    expect(path(['hooks', '--json', 'deliver', '--', 'list'])).toBe('hooks deliver');
  });

  it('a real run ending 7 passes with the real declarations and fails with a scratch one that leaves 7 out', async () => {
    const argv = ['accounts', 'get', '1001', '--no-retry'];
    const result = await runCli(argv, { env: { TAXPREP_BASE_URL: 'http://127.0.0.1:9/v1beta', TAXPREP_API_KEY: `tpk_${'a'.repeat(32)}` } });
    expect(result.exitCode).toBe(EXIT.NETWORK);
    expect(undeclaredExit(program, argv, result.exitCode)).toBeUndefined();

    const scratch = withoutCode(program, ['accounts', 'get'], 'NETWORK');
    expect(undeclaredExit(scratch, argv, result.exitCode)).toBe(
      '`taxprep accounts get` ended with exit 7, which its declaration does not list (it lists 0, 1, 2, 3, 4, 5, 6, 8, 11, 12, 74, 141): add it to exitCodes in its register.ts, or fix the code',
    );
  });

  it('the helper every run goes through throws on an undeclared code, and ignores a run a signal ended', () => {
    expect(() => expectDeclaredExit(['profiles', 'list'], EXIT.NETWORK)).toThrow(/^`taxprep profiles list` ended with exit 7, which its declaration does not list/);
    expect(() => expectDeclaredExit(['profiles', 'list'], EXIT.OUTPUT_CLOSED)).not.toThrow();
    expect(() => expectDeclaredExit(['profiles', 'list'], -1)).not.toThrow();
  });
});

/** A copy of the tree in which the command at `path` does not declare `name`. */
function withoutCode(spec: CommandSpec, path: string[], name: string): CommandSpec {
  if (path.length === 0) return { ...spec, exitCodes: (spec.exitCodes ?? []).filter((entry) => (typeof entry === 'string' ? entry : entry[0]) !== name) };
  return { ...spec, subcommands: (spec.subcommands ?? []).map((sub) => (sub.name === path[0] ? withoutCode(sub, path.slice(1), name) : sub)) };
}
