import { describe, expect, it } from 'vitest';
import { buildProgram, parseGlobalOptions } from '../../src/cli';
import type { CommandModule, RawInvocation } from '../../src/commands/types';
import * as add from '../../src/commands/profiles/add';
import * as show from '../../src/commands/profiles/show';
import * as api from '../../src/commands/api/api';
import * as completion from '../../src/commands/completion/completion';
import { UsageError } from '../../src/errors';

/** Parses argv with the real command tree; returns the program's own options and what the command got. */
async function parse(argv: string[]): Promise<{ globals: Record<string, unknown>; raw: RawInvocation; module: CommandModule<unknown> }> {
  let captured: { raw: RawInvocation; module: CommandModule<unknown> } | undefined;
  const program = buildProgram(async (load, raw) => {
    captured = { raw, module: await load() };
  }, { writeOut: () => undefined, writeErr: () => undefined });
  await program.parseAsync(argv, { from: 'user' });
  if (captured === undefined) throw new Error('no command ran');
  return { globals: program.opts(), ...captured };
}

describe('global flags, before or after the command', () => {
  it.each([
    [['--json', 'whoami'], { json: true, verbose: false, color: true, retry: true }],
    [['whoami', '--json', '--verbose'], { json: true, verbose: true, color: true, retry: true }],
    [['whoami', '--no-color', '--no-retry'], { json: false, verbose: false, color: false, retry: false }],
    [['--profile', 'acme', 'whoami', '--base-url', 'https://x.example/v1beta'], { profile: 'acme', baseUrl: 'https://x.example/v1beta' }],
    [['whoami', '--timeout', '2m', '--max-retries', '5'], { timeoutMs: 120_000, maxRetries: 5 }],
    [['whoami', '--max-retries', '0'], { maxRetries: 0 }],
  ])('%j', async (argv, expected) => {
    const { globals } = await parse(argv);
    expect(parseGlobalOptions(globals)).toMatchObject(expected);
  });

  it.each([
    ['30s', 30_000],
    ['500ms', 500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1.5s', 1500],
    ['1d', 86_400_000],
    ['1m30s', 90_000],
  ])('--timeout %s = %i ms', (text, ms) => {
    expect(parseGlobalOptions({ timeout: text }).timeoutMs).toBe(ms);
  });

  it.each(['0', '0s', '0.1ms', '-1s', '10 minutes', 'soon', '', '45'])('--timeout %j is refused', (text) => {
    expect(() => parseGlobalOptions({ timeout: text })).toThrow(UsageError);
    expect(() => parseGlobalOptions({ timeout: text })).toThrow('--timeout must be a duration such as 500ms, 30s, 90m, 24h, 7d or 1h30m, greater than 0');
  });


  it.each(['21', '-1', 'x', '1.5'])('--max-retries %j is refused', (text) => {
    expect(() => parseGlobalOptions({ maxRetries: text })).toThrow(/--max-retries must be an integer from 0 to 20/);
  });
});

/**
 * Issue 21, case 8: `--within 8` was refused while `--timeout 8` meant 8 seconds. One rule for every
 * duration flag: a unit is required, and a bare number is refused naming the units it may mean.
 */
describe('every duration flag refuses a bare number alike, saying the unit', () => {
  it.each([
    [['whoami', '--timeout', '8'], '--timeout'],
    [['login-link', 'renew', '--from', 'f', '--within', '8'], '--within'],
    [['status', '--within', '8'], '--within'],
    [['projects', 'status', '5001', '--watch', '--interval', '8'], '--interval'],
    [['projects', 'status', '5001', '--watch', '--timeout', '8'], '--timeout'],
  ])('%j', async (argv, flag) => {
    const refuse = async () => {
      const { globals, raw, module } = await parse(argv);
      parseGlobalOptions(globals);
      module.parseOptions(raw);
    };
    const error = await refuse().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(new RegExp(`^${flag} must be `));
    expect((error as UsageError).message).toContain('8 has no unit: 8s, 8m, 8h or 8d?');
  });
});

describe('argv -> options', () => {
  it.each<[string[], add.AddProfileOptions]>([
    [['profiles', 'add', 'acme'], { name: 'acme', baseUrl: undefined, apiKeyFromStdin: false, makeDefault: false, verify: true, insecureStorage: false, apiKeyCommand: undefined, caFile: undefined, stateUrl: undefined, stateNamespace: undefined }],
    [['profiles', 'add', 'ci', '--api-key-stdin', '--default', '--base-url', 'https://x.example/v1beta/'], { name: 'ci', baseUrl: 'https://x.example/v1beta', apiKeyFromStdin: true, makeDefault: true, verify: true, insecureStorage: false, apiKeyCommand: undefined, caFile: undefined, stateUrl: undefined, stateNamespace: undefined }],
    [['--base-url', 'http://localhost:4010/v1beta', 'profiles', 'add', 'local'], { name: 'local', baseUrl: 'http://localhost:4010/v1beta', apiKeyFromStdin: false, makeDefault: false, verify: true, insecureStorage: false, apiKeyCommand: undefined, caFile: undefined, stateUrl: undefined, stateNamespace: undefined }],
    [['profiles', 'add', 'box', '--insecure-storage'], { name: 'box', baseUrl: undefined, apiKeyFromStdin: false, makeDefault: false, verify: true, insecureStorage: true, apiKeyCommand: undefined, caFile: undefined, stateUrl: undefined, stateNamespace: undefined }],
    [['profiles', 'add', 'op', '--api-key-command', "op read 'op://Partners/taxprep/key'"], { name: 'op', baseUrl: undefined, apiKeyFromStdin: false, makeDefault: false, verify: true, insecureStorage: false, apiKeyCommand: "op read 'op://Partners/taxprep/key'", caFile: undefined, stateUrl: undefined, stateNamespace: undefined }],
    [['profiles', 'add', 'offline', '--no-verify'], { name: 'offline', baseUrl: undefined, apiKeyFromStdin: false, makeDefault: false, verify: false, insecureStorage: false, apiKeyCommand: undefined, caFile: undefined, stateUrl: undefined, stateNamespace: undefined }],
    [
      ['profiles', 'add', 'team', '--state-url', 'postgres://ops@db.example.com/taxprep', '--state-namespace', 'acme'],
      { name: 'team', baseUrl: undefined, apiKeyFromStdin: false, makeDefault: false, verify: true, insecureStorage: false, apiKeyCommand: undefined, caFile: undefined, stateUrl: 'postgres://ops@db.example.com/taxprep', stateNamespace: 'acme' },
    ],
    [
      ['profiles', 'add', 'firm', '--ca-file', 'certs/ca.pem'],
      { name: 'firm', baseUrl: undefined, apiKeyFromStdin: false, makeDefault: false, verify: true, insecureStorage: false, apiKeyCommand: undefined, caFile: `${process.cwd()}/certs/ca.pem`, stateUrl: undefined, stateNamespace: undefined },
    ],
  ])('profiles add %j', async (argv, expected) => {
    const { raw, module } = await parse(argv);
    expect(module.parseOptions(raw)).toEqual(expected);
  });

  it.each([
    [['--insecure-storage'], /--api-key-command keeps no key to store: it takes no --insecure-storage/],
    [['--api-key-stdin'], /--api-key-command reads the key from the command: it takes no --api-key-stdin/],
    [[], /--api-key-command is run without a shell: "\|" would need one/],
  ])('profiles add --api-key-command refuses %j (exit 2)', async (extra, message) => {
    const command = extra.length === 0 ? 'op read x | head -1' : 'op read x';
    const { raw, module } = await parse(['profiles', 'add', 'op', '--api-key-command', command, ...extra]);
    expect(() => module.parseOptions(raw)).toThrow(message);
  });

  it('a state URL given as a flag holds no password; a namespace follows its rule', async () => {
    const { raw, module } = await parse(['profiles', 'add', 'team', '--state-url', 'postgres://ops:hunter2@db.example.com/taxprep']);
    expect(() => module.parseOptions(raw)).toThrow('--state-url must not hold a password (flags end up in shell history and process lists): use PGPASSWORD, ~/.pgpass or a PGSERVICE');
    const named = await parse(['profiles', 'add', 'team', '--state-namespace', 'Acme Team']);
    expect(() => named.module.parseOptions(named.raw)).toThrow('--state-namespace must be 1 to 63 lower-case letters, digits, "_", "." or "-", starting with a letter or digit');
  });

  it('profiles add has no flag for the key itself', async () => {
    await expect(parse(['profiles', 'add', 'acme', '--api-key', 'tpk_x'])).rejects.toThrow(/unknown option '--api-key'/);
  });

  it.each<[string[], show.ShowProfileOptions]>([
    [['profiles', 'show'], { name: undefined }],
    [['profiles', 'show', 'acme'], { name: 'acme' }],
  ])('profiles show %j', async (argv, expected) => {
    const { raw, module } = await parse(argv);
    expect(module.parseOptions(raw)).toEqual(expected);
  });

  it.each<[string[], api.ApiOptions]>([
    [['api', 'get', '/accounts/1'], { method: 'GET', path: '/accounts/1', query: {}, fields: undefined, input: undefined }],
    [['api', 'GET', 'deliverables', '-q', 'status=completed', '--query', 'limit=5'], { method: 'GET', path: 'deliverables', query: { status: 'completed', limit: '5' }, fields: undefined, input: undefined }],
    [
      ['api', 'POST', '/accounts', '-f', 'email=a@b.example', '-f', 'spouse.send_invitation=false', '-f', 'n=12', '--raw-field', 'code=007'],
      { method: 'POST', path: '/accounts', query: {}, fields: { email: 'a@b.example', spouse: { send_invitation: false }, n: 12, code: '007' }, input: undefined },
    ],
    [['api', 'POST', '/accounts', '--input', '-'], { method: 'POST', path: '/accounts', query: {}, fields: undefined, input: '-' }],
  ])('api %j', async (argv, expected) => {
    const { raw, module } = await parse(argv);
    expect(module.parseOptions(raw)).toEqual(expected);
  });

  it.each([
    [['api', 'GET', '/x', '-f', 'a=1'], /a GET request has no body: give parameters with --query/],
    [['api', 'POST', '/x', '-f', 'a=1', '--input', 'body.json'], /--input and --field\/--raw-field cannot be combined/],
    [['api', 'POST', '/x', '-f', 'novalue'], /--field "novalue" must be key=value/],
    [['api', 'GE T', '/x'], /must be an HTTP method/],
  ])('api %j is refused', async (argv, message) => {
    const { raw, module } = await parse(argv);
    expect(() => module.parseOptions(raw)).toThrow(message);
  });

  it('completion takes one of the shells', async () => {
    const { raw, module } = await parse(['completion', 'fish']);
    expect(module.parseOptions(raw)).toEqual<completion.CompletionOptions>({ shell: 'fish' });
    await expect(parse(['completion', 'powershell'])).rejects.toThrow(/Allowed choices are bash, zsh, fish/);
  });
});
