import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { branchesOf, branchOf, main, reportError } from '../../src/cli';
import { VERSION } from '../../src/api/version';
import { EXIT, EXIT_CODE_MEANINGS, NetworkError, UsageError } from '../../src/errors';
import { runCli } from '../helpers/cli';
import { CapturedStream } from '../helpers/context';

const KEY = 'tpk_mainTestKey000000000000000042';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `main` in-process with captured streams and an environment of its own. */
async function run(argv: string[], options: { env?: Record<string, string>; stdin?: string; tty?: boolean } = {}): Promise<Run> {
  const stdout = new CapturedStream({ isTTY: options.tty === true });
  const stderr = new CapturedStream({ isTTY: options.tty === true });
  const stdin = Object.assign(new PassThrough(), { isTTY: options.tty === true });
  stdin.end(options.stdin ?? '');
  const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'taxprep-main-')), ...options.env };
  const code = await main(argv, { env, io: { stdout, stderr, stdin } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('version and help', () => {
  it('--version prints the version on stdout', async () => {
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('help environment documents precedence and every variable', async () => {
    const result = await run(['help', 'environment']);
    expect(result.code).toBe(0);
    for (const text of ['1. flags', 'TAXPREP_API_KEY', 'TAXPREP_BASE_URL', 'TAXPREP_PROFILE', 'HTTPS_PROXY', 'NO_PROXY', 'NO_COLOR', 'http://127.0.0.1:4010/v1beta']) {
      expect(result.stdout).toContain(text);
    }
  });

  it('help exit-codes lists every exit code with its meaning', async () => {
    const result = await run(['help', 'exit-codes']);
    expect(result.code).toBe(0);
    // A meaning longer than the line continues under itself: compared with its wrapping undone.
    const unwrapped = result.stdout.replace(/\n {7}(?=\S)/g, ' ');
    for (const [name, meaning] of EXIT_CODE_MEANINGS) expect(unwrapped).toMatch(new RegExp(`^  ${EXIT[name]} +${meaning.replace(/[()*.]/g, '\\$&')}$`, 'm'));
  });

  it('help <command> shows that command, examples included', async () => {
    const result = await run(['help', 'profiles', 'add']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('USAGE\n  taxprep profiles add <name> [flags]\n');
    expect(result.stdout).toContain('\nEXAMPLES\n');
  });

  it('help for an unknown topic is a usage error', async () => {
    const result = await run(['help', 'nope']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stderr).toContain('error: no help topic or command "nope"');
  });

  it.each([[[]], [['projects']], [['help']], [['help', 'projects']]])('taxprep %j prints its help on stdout and exits 0 (help on request)', async (argv) => {
    const result = await run(argv);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^USAGE\n {2}taxprep /m);
  });

  it.each([[['-v']], [['-V']]])('taxprep %j prints the version alone', async (argv) => {
    expect(await run(argv)).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('taxprep version prints the version, commit, build date and what it runs on (unknown when run from the sources)', async () => {
    expect(await run(['version'])).toEqual({
      code: 0,
      stdout: `taxprep ${VERSION}\ncommit:   unknown\nbuilt:    unknown\nruns on:  node ${process.version} (${process.platform}-${process.arch})\n`,
      stderr: '',
    });
    const json = await run(['version', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ version: VERSION, commit: 'unknown', build_date: 'unknown', runtime: `node ${process.version}`, node: process.version, platform: `${process.platform}-${process.arch}` });
  });

  it.each([
    [['accounts', 'get', '1001'], 'accounts'],
    [['health'], 'health'],
    [['accounts', 'get', '1001', '--help'], undefined],
    [['accounts', '-h'], undefined],
    [['--json', 'accounts', 'get', '1001'], undefined],
    [['acounts', 'get'], undefined],
    [[], undefined],
  ])('%j builds the branch of %s only (undefined: the whole tree)', (argv, name) => {
    expect(branchOf(argv)?.name).toBe(name);
  });

  it.each([
    [[], []],
    [['--help'], []],
    [['-h'], []],
    [['accounts', 'get', '1001'], ['accounts']],
    [['--help', 'accounts'], undefined],
    [['--help', '--json'], undefined],
    [['-v'], undefined],
  ])('%j builds the branches %j (undefined: every one)', (argv, names) => {
    const built = branchesOf(argv).map((spec) => spec.name);
    if (names === undefined) expect(built.length).toBeGreaterThan(10);
    else expect(built).toEqual(names);
  });

  it('the program\'s own help, built without the commands, is the help that names them all', async () => {
    const [alone, withCommands] = await Promise.all([run(['--help']), run(['--help', '--no-color'])]);
    expect(alone).toEqual(withCommands);
    expect(alone.stdout).toMatch(/^ {2}accounts: +/m);
    expect(await run([])).toEqual(alone);
  });

  it('help asked after a command, and suggestions within its branch, see the whole branch', async () => {
    const help = await run(['accounts', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^ {2}get: +Show an account$/m);
    const misspelt = await run(['accounts', 'gett', '1001']);
    expect(misspelt.code).toBe(EXIT.USAGE);
    expect(misspelt.stderr).toBe("error: unknown command 'gett'\n(Did you mean get?)\nRun with --help for usage and examples.\n");
  });

  it('a noun followed by a word that names no subcommand is an unknown command, with a suggestion', async () => {
    const result = await run(['projects', 'lst']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe("error: unknown command 'lst'\n(Did you mean list?)\nRun with --help for usage and examples.\n");
  });
});

describe('at a terminal (the built taxprep under a pseudo-terminal)', () => {
  it('a noun alone shows its help, exit 0; a subcommand refuses its parent\'s flags, exit 2', async () => {
    const help = await runCli(['projects'], { tty: true });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/^USAGE\n {2}taxprep projects <command> \[flags\]\n/m);
    expect(help.stdout).toMatch(/^ {2}list: +List an account's projects/m);
    const ledger = await runCli(['login-link', 'ledger', '--purpose', 'bogus', '--from', 'x.csv'], { tty: true });
    expect(ledger.exitCode).toBe(EXIT.USAGE);
    expect(ledger.stdout).toMatch(/^error: unknown option '--(purpose|from)'\nRun with --help for usage and examples\.\n$/);
  });
});

describe('usage errors: exit 2, a suggestion, JSON with --json', () => {
  it('an unknown command gets a suggestion', async () => {
    const result = await run(['acounts', 'get', '1']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe("error: unknown command 'acounts'\n(Did you mean accounts?)\nRun with --help for usage and examples.\n");
  });

  it('with --json the error is one JSON line on stderr', async () => {
    const result = await run(['whoami', '--jsn', '--json']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'USAGE_ERROR', message: "unknown option '--jsn' (Did you mean --json?)" } });
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a bad global flag value names the flag and its rule', async () => {
    const result = await run(['--max-retries', 'lots', 'whoami', '--json']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(JSON.parse(result.stderr).error).toEqual({
      code: 'USAGE_ERROR',
      message: '--max-retries must be an integer from 0 to 20',
      details: { '--max-retries': ['must be an integer from 0 to 20'] },
    });
  });

  it('a missing argument', async () => {
    const result = await run(['profiles', 'use']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stderr).toContain("error: missing required argument 'name'");
  });
});

describe('profiles and whoami', () => {
  it('add (key from stdin), list, show, use, remove: the key is never printed', async () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'taxprep-profiles-')) };
    const profilesFile = join(env.XDG_CONFIG_HOME, 'taxprep', 'profiles.json');
    const outputs: string[] = [];
    const step = async (argv: string[], stdin?: string) => {
      const result = await run(argv, { env, stdin });
      outputs.push(result.stdout, result.stderr);
      return result;
    };

    const added = await step(['profiles', 'add', '--insecure-storage', 'acme', '--base-url', 'https://acme.example/v1beta', '--no-verify'], `${KEY}\n`);
    expect(added.code).toBe(0);
    expect(added.stderr).toContain('Added profile "acme": https://acme.example/v1beta, key tpk_…0042 (the default profile)');
    expect((await step(['profiles', 'add', '--insecure-storage', 'staging', '--api-key-stdin', '--json', '--no-verify'], `${KEY}\n`)).stdout).toBe(
      `{"name":"staging","base_url":"http://127.0.0.1:4010/v1beta","api_key":"tpk_…0042","api_key_location":${JSON.stringify(`insecure file ${profilesFile}`)},"default":false}\n`,
    );

    const listed = await step(['profiles', 'list', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual({
      profiles: [
        { name: 'acme', base_url: 'https://acme.example/v1beta', api_key: 'tpk_…0042', api_key_location: `insecure file ${profilesFile}`, default: true },
        { name: 'staging', base_url: 'http://127.0.0.1:4010/v1beta', api_key: 'tpk_…0042', api_key_location: `insecure file ${profilesFile}`, default: false },
      ],
    });
    expect((await step(['profiles', 'list'])).stdout).toBe('*\tacme\thttps://acme.example/v1beta\ttpk_…0042\n\tstaging\thttp://127.0.0.1:4010/v1beta\ttpk_…0042\n');

    expect((await step(['profiles', 'use', 'staging'])).code).toBe(0);
    const shown = await step(['profiles', 'show']);
    expect(shown.stdout).toMatch(/^Profile: +staging$/m);
    expect(shown.stdout).toMatch(/^API key: +tpk_…0042$/m);
    expect(shown.stdout).toMatch(new RegExp(`^Key in: +insecure file ${profilesFile}$`, 'm'));
    expect(shown.stdout).toMatch(/^Default: +yes$/m);

    const whoami = await step(['whoami', '--json', '--offline']);
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout)).toEqual({
      profile: 'staging',
      profile_source: 'default',
      base_url: 'http://127.0.0.1:4010/v1beta',
      base_url_source: 'profile',
      api_key: 'tpk_…0042',
      api_key_source: 'profile',
      api_key_location: `insecure file ${profilesFile}`,
      key_check: null,
    });
    const chosen = await step(['--profile', 'acme', 'whoami', '--offline']);
    expect(chosen.stdout).toMatch(/^Service: +not checked \(--offline\)$/m);
    expect(chosen.stdout).toMatch(/^Profile: +acme \(from --profile\)$/m);
    expect(chosen.stdout).toMatch(/^Base URL: +https:\/\/acme\.example\/v1beta \(from the profile\)$/m);

    const removed = await step(['profiles', 'remove', 'staging']);
    expect(removed.stderr).toContain('Removed profile "staging"');
    expect(removed.stderr).toContain('There is no default profile now');
    const missing = await step(['profiles', 'use', 'staging']);
    expect(missing.code).toBe(EXIT.USAGE);
    expect(missing.stderr).toContain('profile "staging" does not exist (profiles: acme)');

    for (const text of outputs) expect(text).not.toContain(KEY);
  });

  it('on a terminal the key is read from a hidden prompt (nothing echoed)', async () => {
    const result = await run(['profiles', 'add', '--insecure-storage', 'acme', '--no-verify'], { stdin: `${KEY}\r`, tty: true });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^API key for profile "acme" \(input is hidden\): \n/);
    expect(result.stderr + result.stdout).not.toContain(KEY);
  });

  it.each([
    ['a malformed key', ['profiles', 'add', '--insecure-storage', 'acme'], 'no-underscore-here\n', /the API key is not well formed\. API keys have the form <prefix>_<random>/],
    ['no key at all', ['profiles', 'add', '--insecure-storage', 'acme'], '', /no API key was given/],
    ['a bad name', ['profiles', 'add', '--insecure-storage', 'a b'], `${KEY}\n`, /profile name "a b" must be 1-64 letters/],
    ['a base URL with credentials', ['profiles', 'add', '--insecure-storage', 'acme', '--base-url', 'https://u:p@x.example'], `${KEY}\n`, /base URL \(--base-url\) must be an http/],
  ])('refuses %s with exit 2', async (_name, argv, stdin, message) => {
    const result = await run(argv, { stdin });
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stderr).toMatch(message);
  });

  it('whoami from the environment, and exit 3 when no key is usable', async () => {
    const fromEnv = await run(['whoami', '--json', '--offline'], { env: { TAXPREP_API_KEY: KEY, TAXPREP_BASE_URL: 'https://env.example/v1beta' } });
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ profile: null, base_url_source: 'environment', api_key: 'tpk_…0042', api_key_source: 'environment' });
    const none = await run(['whoami']);
    expect(none.code).toBe(EXIT.AUTH);
    expect(none.stdout).toMatch(/^API key: +none$/m);
    expect(none.stderr).toContain('No API key is configured');
    const malformed = await run(['whoami'], { env: { TAXPREP_API_KEY: 'secretvalue without a prefix' } });
    expect(malformed.code).toBe(EXIT.AUTH);
    expect(malformed.stdout).toMatch(/^API key: +\(malformed key, hidden\) \(from TAXPREP_API_KEY\)$/m);
    expect(malformed.stdout + malformed.stderr).not.toContain('secretvalue');
  });

  it('__complete profiles (for the completion scripts) prints the names only, and nothing for a damaged file', async () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'taxprep-complete-')) };
    await run(['profiles', 'add', '--insecure-storage', 'acme', '--no-verify'], { env, stdin: `${KEY}\n` });
    await run(['profiles', 'add', '--insecure-storage', 'staging', '--no-verify'], { env, stdin: `${KEY}\n` });
    expect(await run(['__complete', 'profiles'], { env })).toEqual({ code: 0, stdout: 'acme\nstaging\n', stderr: '' });
    writeFileSync(join(env.XDG_CONFIG_HOME, 'taxprep', 'profiles.json'), '{"profiles": [');
    expect(await run(['__complete', 'profiles'], { env })).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await run(['--help'])).stdout).not.toContain('__complete');
  });

  it('errors read as text on a terminal even with --json or --jq, and as JSON on stderr in a pipe', async () => {
    const env = { TAXPREP_BASE_URL: 'http://127.0.0.1:9/v1beta' };
    for (const flags of [['--json'], ['--jq', '.id']]) {
      const terminal = await run(['api', 'GET', '/accounts/1', ...flags], { env, tty: true });
      expect(terminal.code).toBe(EXIT.AUTH);
      expect(terminal.stderr).toMatch(/^error: no API key is set\b|^error: /);
      expect(() => JSON.parse(terminal.stderr)).toThrow();
      const pipe = await run(['api', 'GET', '/accounts/1', ...flags], { env });
      expect(JSON.parse(pipe.stderr).error.code).toBe('NO_API_KEY');
    }
  });

  it('a stdout that fails (a full disk) ends with one message and exit 74; a closed pipe quietly with 141', async () => {
    for (const [code, exit, stderr] of [
      ['ENOSPC', EXIT.OUTPUT_FAILED, 'error: cannot write the output: the device is full (ENOSPC)\n'],
      ['EPIPE', EXIT.OUTPUT_CLOSED, ''],
    ] as const) {
      for (const argv of [['help', 'exit-codes'], ['--help'], ['--version']]) {
        const captured = new CapturedStream({ isTTY: false });
        const stdout = new Writable({ write: (_chunk, _encoding, callback) => callback(Object.assign(new Error(`${code}: failed`), { code })) });
        expect(await main(argv, { env: {}, io: { stdout, stderr: captured } }), argv.join(' ')).toBe(exit);
        expect(captured.text().split('\n')[0]).toBe(stderr.split('\n')[0]);
      }
    }
  });

  it('a command that needs a key fails before sending, exit 3, as JSON with --json', async () => {
    const result = await run(['api', 'GET', '/accounts/1', '--json'], { env: { TAXPREP_BASE_URL: 'http://127.0.0.1:9/v1beta' } });
    expect(result.code).toBe(EXIT.AUTH);
    expect(JSON.parse(result.stderr).error.code).toBe('NO_API_KEY');
  });
});

describe('one place maps failures', () => {
  const capture = () => {
    let text = '';
    return { write: (chunk: string) => void (text += chunk), text: () => text };
  };

  it('a CliError: message and hint, or its body as JSON', () => {
    const error = new NetworkError('TIMEOUT', 'no answer from http://x within 1.0s', { hint: 'Raise --timeout.' });
    const plain = capture();
    expect(reportError(error, { write: plain.write, json: false, verbose: false })).toBe(EXIT.NETWORK);
    expect(plain.text()).toBe('error: no answer from http://x within 1.0s\nRaise --timeout.\n');
    const json = capture();
    reportError(new UsageError('bad', { details: { '--x': ['must be y'] } }), { write: json.write, json: true, verbose: false });
    expect(json.text()).toBe('{"error":{"code":"USAGE_ERROR","message":"bad","details":{"--x":["must be y"]}}}\n');
  });

  it('an unexpected error: exit 1, one line and no stack unless --verbose', () => {
    const quiet = capture();
    expect(reportError(new TypeError('boom'), { write: quiet.write, json: false, verbose: false })).toBe(EXIT.INTERNAL);
    expect(quiet.text()).toBe('error: unexpected failure in taxprep: boom\nThis is a bug: run again with --verbose and report the output.\n');
    const verbose = capture();
    reportError(new TypeError('boom'), { write: verbose.write, json: false, verbose: true });
    expect(verbose.text()).toContain('at ');
  });
});
