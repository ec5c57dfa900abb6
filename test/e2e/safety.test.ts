import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { MINIMAL_KEY, startContractMinimalServer, type MinimalServer } from '../helpers/contractMinimalServer';
import { startAnswerProxy, type AnswerProxy, type AnswerVariant } from '../helpers/answerProxy';
import { cliCommandLine, makeHome, registerSecret, runCli, runScanned, startCli, type RunCliOptions } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * What a server or proxy we did not write may do to answers (content codings, the key echoed back),
 * and what happens when taxprep's own output cannot be written: the built CLI, as users run it.
 */

let server: MinimalServer;
let proxy: AnswerProxy;
let mock: RunningMock;

beforeAll(async () => {
  server = await startContractMinimalServer();
  proxy = await startAnswerProxy(server.origin);
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 40 })), rateLimits: [] });
  registerSecret(MINIMAL_KEY);
});
afterAll(async () => {
  await proxy?.close();
  await server?.close();
  await mock?.close();
});

const through = (variant: AnswerVariant, options: RunCliOptions = {}): RunCliOptions => ({
  ...options,
  env: { TAXPREP_BASE_URL: proxy.baseUrl(variant), TAXPREP_API_KEY: MINIMAL_KEY, NO_COLOR: '1', ...options.env },
});
const CREATE = ['accounts', 'create', '--email', 'ada@example.com', '--first-name', 'Ada', '--last-name', 'Lovelace'];

describe('content codings', () => {
  it('asks for gzip, deflate and br, and reads a gzip answer it asked for', async () => {
    proxy.acceptEncodings.length = 0;
    const result = await runCli(['accounts', 'get', '2001', '--json'], through('asked'));
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({ id: '2001', email: 'ada@example.com' });
    expect(proxy.acceptEncodings).toEqual(['gzip, deflate, br']);
  });

  it.each(['gzip', 'deflate', 'raw-deflate', 'br', 'gzip-br'] as const)('decodes %s, coded whether asked or not, on reads, writes and errors', async (variant) => {
    const read = await runCli(['accounts', 'get', '2001', '--json'], through(variant));
    expect(read).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(read.stdout)).toMatchObject({ id: '2001', email: 'ada@example.com', tier: 'gold' });
    const write = await runCli([...CREATE, '--json'], through(variant));
    expect(write).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(write.stdout)).toMatchObject({ id: '2001', login_link: 'https://app.example/auth/partner-login/tok2001' });
    const raw = await runCli(['api', 'GET', 'accounts/2001'], through(variant));
    expect(raw).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(raw.stdout)).toMatchObject({ id: '2001', tier: 'gold' });
    const error = await runCli(['docs', 'get', '7999'], through(variant));
    expect(error).toMatchObject({ exitCode: 4, stdout: '' });
    expect(error.stderr).toBe('error: no such document\n');
  });

  it('stops a 1 KB answer that inflates to 100 MB at --max-response-size: RESPONSE_TOO_LARGE, exit 12', async () => {
    const result = await runCli(['accounts', 'get', '2001', '--max-response-size', '2MB'], through('bomb', { env: { NODE_OPTIONS: '--max-old-space-size=64' } }));
    expect(result.exitCode).toBe(12);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: the service's answer is larger than 2(\.0)? MB; taxprep stopped reading it\n/);
  });

  it('a coding it cannot read: a read fails with INVALID_RESPONSE (exit 8), a write the service acknowledged is done with a warning', async () => {
    for (const variant of ['zstd', 'broken'] as const) {
      const read = await runCli(['accounts', 'get', '2001'], through(variant));
      expect(read.exitCode).toBe(8);
      expect(read.stderr.split('\n')[0]).toMatch(/^error: the service's answer \(HTTP 200\) could not be read: /);
      const write = await runCli(CREATE, through(variant));
      expect(write.exitCode).toBe(0);
      expect(write.stderr).toMatch(/^warning: the service accepted the request \(HTTP 201\) but its answer could not be read: /);
    }
    // `taxprep api` alike: a read fails, a write the service acknowledged is done with the warning.
    expect((await runCli(['api', 'GET', 'accounts/2001'], through('zstd'))).exitCode).toBe(8);
    const echoed = await runCli(['api', 'POST', 'echo', '-f', 'a=1'], through('zstd'));
    expect(echoed).toMatchObject({ exitCode: 0, stdout: '' });
    expect(echoed.stderr).toMatch(/^warning: the service accepted the request \(HTTP 200\) but its answer could not be read: it is coded as "zstd"/);
    const zstd = await runCli(['accounts', 'get', '2001'], through('zstd'));
    expect(zstd.stderr).toContain('it is coded as "zstd", which taxprep cannot decode (it asks for gzip, deflate, br)');
    const broken = await runCli(['accounts', 'get', '2001', '--json'], through('broken'));
    expect(JSON.parse(broken.stderr)).toMatchObject({ error: { code: 'INVALID_RESPONSE', message: expect.stringContaining('its gzip coding does not decode') } });
  });
});

describe('a service that echoes the key', () => {
  const redacted = 'live_…0d9e';
  const percentEncoded = [...MINIMAL_KEY].map((character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`).join('');
  /** runCli fails on the key written plainly; the forms a reader could decode are checked here. */
  const expectNoKey = (text: string) => {
    expect(text).not.toContain(MINIMAL_KEY.slice(5));
    expect(text.toUpperCase()).not.toContain(percentEncoded.slice(15));
    expect(text).not.toMatch(/\\u00/);
  };

  it('shows it redacted in tables, --json, --verbose headers and success fields', async () => {
    for (const args of [['accounts', 'get', '2001'], ['accounts', 'get', '2001', '--json'], ['accounts', 'get', '2001', '--verbose'], CREATE, ['docs', 'list', '2001', '--json']]) {
      const result = await runCli(args, through('echo-key'));
      expect(result.exitCode, args.join(' ')).toBe(0);
      expect(result.stdout).toContain(redacted);
      expectNoKey(result.stdout + result.stderr);
    }
    const verbose = await runCli(['accounts', 'get', '2001', '--verbose'], through('echo-key'));
    expect(verbose.stderr).toContain(`< x-request-key: ${redacted} ${redacted}\n`);
  });

  it('shows it redacted in error messages and details, as text and as JSON', async () => {
    const text = await runCli(['docs', 'get', '7999'], through('echo-key'));
    expect(text.exitCode).toBe(4);
    expect(text.stderr.split('\n')[0]).toBe(`error: no such document Bearer ${redacted} ${redacted} ${redacted} ${redacted}`);
    const json = await runCli(['docs', 'get', '7999', '--json'], through('echo-key'));
    expect(JSON.parse(json.stderr).error.code).toBe(`DOCUMENT_NOT_FOUND Bearer ${redacted} ${redacted} ${redacted} ${redacted}`);
    const refused = await runCli(['accounts', 'get', '2001'], through('echo-key', { env: { TAXPREP_API_KEY: 'live_0000wrongkey00000000000' } }));
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain(`Invalid API key Bearer live_…0000`);
    for (const result of [text, json, refused]) expectNoKey(result.stdout + result.stderr);
  });
});

/** The environment of a CLI run: its own HOME and XDG directories, as runCli gives them. */
function childEnv(home: string, env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local', 'share'), ...env };
}

/** Runs the CLI with its stdout a pipe whose reader has already gone. */
async function withClosedStdout(args: string[], env: Record<string, string>, home = makeHome()): Promise<{ exitCode: number | null; stderr: string }> {
  const { child, result } = startCli(args, { home, env, stdin: 'ignore' });
  child.stdout!.destroy();
  const { exitCode, stderr } = await result;
  return { exitCode, stderr };
}

describe('output that cannot be written', () => {
  const env = () => ({ TAXPREP_BASE_URL: server.baseUrl(), TAXPREP_API_KEY: MINIMAL_KEY });

  it('to a full device (/dev/full): one message on stderr and exit 74, for a read and a write; JSON in a pipe with --json', async () => {
    for (const args of [['health'], ['projects', 'list', '2001'], CREATE]) {
      const result = await runDevFull(args, env());
      expect(result.exitCode, args.join(' ')).toBe(74);
      expect(result.stderr.split('\n')[0]).toBe('error: cannot write the output: the device is full (ENOSPC)');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    const json = await runDevFull(['health', '--json'], env());
    expect(JSON.parse(json.stderr)).toEqual({ error: { code: 'OUTPUT_FAILED', message: 'cannot write the output: the device is full (ENOSPC)' } });
  });

  it('to a closed pipe: quiet, exit 141 (as git and gh), for a read and a write', async () => {
    for (const args of [['health'], ['projects', 'list', '2001'], CREATE]) {
      expect(await withClosedStdout(args, env()), args.join(' ')).toEqual({ exitCode: 141, stderr: '' });
    }
  });

  it('a batch stops sending when its output cannot be written, and its ledger holds every link the service made', async () => {
    const ids = Array.from({ length: 40 }, (_, index) => String(FIRST_ACCOUNT_ID + index));
    const batchEnv = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme };
    for (const outcome of ['closed', 'full'] as const) {
      mock.deps.requestLog.clear();
      const home = makeHome();
      const args = ['login-link', ...ids, '--concurrency', '2'];
      const result = outcome === 'closed' ? await withClosedStdout(args, batchEnv, home) : await runDevFull(args, batchEnv, home);
      expect(result.exitCode).toBe(outcome === 'closed' ? 141 : 74);
      const sent = mock.deps.requestLog.entries().filter((entry) => entry.method === 'POST' && entry.status === 201).length;
      expect(sent).toBeGreaterThan(0);
      expect(sent).toBeLessThan(ids.length);
      const ledger = readFileSync(join(home, '.local', 'share', 'taxprep', 'login-links.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string });
      const issued = ledger.filter((record) => record.type === 'issued').length;
      const unanswered = ledger.filter((record) => record.type === 'intent').length - issued;
      // Every link the service made is in the ledger as issued, or as asked without an answer (uncertain).
      expect(issued).toBeLessThanOrEqual(sent);
      expect(issued + unanswered).toBeGreaterThanOrEqual(sent);
    }
  });
});

/** Runs the CLI with its stdout on /dev/full. */
async function runDevFull(args: string[], env: Record<string, string>, home = makeHome()): Promise<{ exitCode: number | null; stderr: string }> {
  const { exitCode, stderr } = await runScanned('/bin/sh', ['-c', `exec ${cliCommandLine(args)} > /dev/full`], { env: childEnv(home, env), extendEnv: false, stdin: 'ignore', stripFinalNewline: false });
  return { exitCode, stderr };
}
