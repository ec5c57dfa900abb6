import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli';
import { walk } from '../../src/commands/spec';
import { program } from '../../src/commands/tree';
import { EXIT } from '../../src/errors';

/** The lines of help that are not command lines (examples), which are continued after ` \`, not filled as prose. */
function proseLines(text: string): string[] {
  const examples = /\nEXAMPLES\n[\s\S]*?(\n\n|$)/;
  return text.replace(examples, '\n').split('\n');
}

class Captured extends Writable {
  text = '';
  constructor(readonly columns?: number) {
    super();
  }
  get isTTY() {
    return this.columns !== undefined;
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void) {
    this.text += chunk.toString('utf8');
    callback();
  }
}

async function help(argv: string[]) {
  const stdout = new Captured();
  const stderr = new Captured();
  const code = await main(argv, { env: {}, io: { stdout, stderr } });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('help like the GitHub CLI', () => {
  it('the top level fits a 24-row screen of 80 columns: usage, core commands, flags, examples', async () => {
    const { code, stdout } = await help(['--help']);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThan(24);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    const headings = lines.filter((line) => /^[A-Z]{2,}/.test(line)).map((line) => line.split(' (')[0]);
    expect(headings).toEqual(['USAGE', 'CORE COMMANDS', 'ADDITIONAL COMMANDS', 'FLAGS', 'EXAMPLES']);
    expect(stdout).toMatch(/^ {2}accounts: +Create client accounts, one or a file of them, and read them$/m);
    // help and version are --help and --version already.
    expect(stdout).toMatch(/^ {2}health, status, watch, hooks, profiles, state, whoami, doctor, api, serve,\n {2}completion$/m);
    expect(stdout).toContain('--json, --jq, --profile');
    expect(stdout).not.toContain('__complete');
  });

  it.each(walk(program).filter(({ path }) => path.length > 0).map(({ path }) => [path.join(' ')]))(
    '`%s --help` has USAGE, INHERITED FLAGS in one line naming `taxprep help flags`, and lines that fit',
    async (path) => {
      const { code, stdout } = await help([...path.split(' '), '--help']);
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`^USAGE\\n {2}taxprep ${path} `, 'm'));
      expect(stdout).toMatch(/^INHERITED FLAGS\n {2}--help, --json, --jq, --profile and \d+ more: see `taxprep help flags`\n/m);
      for (const line of proseLines(stdout)) expect(line.length, line).toBeLessThanOrEqual(80);
    },
  );

  it('`hooks --help` at 80 columns shows each command\'s whole description, wrapped under itself, never cut', async () => {
    const { code, stdout } = await help(['hooks', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}list: +List this profile's hooks: state, pending and failed\n {18}deliveries \(secrets and headers redacted\)$/m);
  });

  it.each(walk(program).filter(({ spec }) => (spec.subcommands ?? []).some((sub) => !sub.hidden)).map(({ path, spec }) => [path.join(' ') || 'taxprep', path, spec] as const))(
    '`%s --help` lists every command with its whole description',
    async (_name, path, spec) => {
      const { stdout } = await help([...path, '--help']);
      const joined = stdout.replace(/\n +/g, ' ');
      const listed = path.length === 0 ? (spec.subcommands ?? []).filter((sub) => sub.group === 'core') : (spec.subcommands ?? []).filter((sub) => !sub.hidden);
      for (const sub of listed) expect(joined, sub.name).toContain(sub.description);
    },
  );

  it('marks required flags in the usage line and beside the flag', async () => {
    const { stdout } = await help(['docs', 'upload', '--help']);
    expect(stdout).toContain('\n  taxprep docs upload <account-id> <file...> --tax-year <year> [flags]\n');
    expect(stdout).toMatch(/^ {2}--tax-year <year> +tax year of the documents, such as 2025 \(required\)$/m);
    const create = await help(['accounts', 'create', '--help']);
    expect(create.stdout.replace(/\s+/g, ' ')).toContain('USAGE taxprep accounts create --email <email> --first-name <name> --last-name <name> [flags] FLAGS');
  });

  it('wraps at word boundaries to the terminal, and continues an example too long for it after ` \\`', async () => {
    const stdout = new Captured(60);
    await main(['docs', 'upload', '--help'], { env: {}, io: { stdout, stderr: new Captured() } });
    for (const line of stdout.text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(60);
    // Broken between shell words, never between a flag and its value, and indented under the command.
    expect(stdout.text).toContain('  $ taxprep docs upload 1001 *.pdf --tax-year 2024 \\\n      --description "From the bank"\n');
  });

  it('suggests a command or topic for a typo in `help`, as for commands, and never a hidden one', async () => {
    expect(await help(['help', 'acounts'])).toEqual({ code: EXIT.USAGE, stdout: '', stderr: 'error: no help topic or command "acounts"\nDid you mean "taxprep help accounts"?\n' });
    expect((await help(['help', 'docs', 'uplod'])).stderr).toContain('Did you mean "taxprep help docs upload"?');
    expect((await help(['help', 'enviroment'])).stderr).toContain('Did you mean "taxprep help environment"?');
    const unknown = await help(['help', 'zzz']);
    expect(unknown.stderr).toContain('Topics and commands: environment, exit-codes, formatting, flags, health, accounts');
    expect(unknown.stderr).not.toContain('__complete');
  });
});
