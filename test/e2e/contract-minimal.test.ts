import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ESC, MINIMAL_KEY, RLO, startContractMinimalServer, type MinimalServer } from '../helpers/contractMinimalServer';
import { cliCommandLine, makeHome, registerSecret, runCli, startScanned, withoutColor, type RunCliOptions } from '../helpers/cli';

/**
 * Every command, run as a user runs it (the built `bin/taxprep.cjs`), against a server that is not
 * our mock: it answers with the contract's minimum shapes and the variants the contract allows
 * (test/helpers/contractMinimalServer.ts). What is asserted is what a person or a script meets:
 * stdout, stderr and the exit code.
 */

let server: MinimalServer;
const files = mkdtempSync(join(tmpdir(), 'taxprep-minimal-'));

beforeAll(async () => {
  server = await startContractMinimalServer();
  registerSecret(MINIMAL_KEY);
});
afterAll(async () => {
  await server?.close();
});

function at(baseUrl: string, options: RunCliOptions = {}): RunCliOptions {
  return { ...options, env: { TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: MINIMAL_KEY, NO_COLOR: '1', ...options.env } };
}
const minimal = (options: RunCliOptions = {}) => at(server.baseUrl(), options);

function file(name: string, content: string | Buffer): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

/** Nothing a terminal would act on: no escape sequences, no C0/C1 controls (but newline), no bidi overrides. */
function expectPrintable(text: string): void {
  expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
}

describe('against the contract minimum', () => {
  it('health: a field the contract does not name is kept in --json', async () => {
    const result = await runCli(['health', '--json'], minimal());
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ status: 'ok', timestamp: '2026-11-23T10:00:00Z', region: 'eu' });
  });

  it('accounts create with "spouse": null succeeds and shows the login link', async () => {
    const args = ['accounts', 'create', '--email', 'ada@example.com', '--first-name', 'Ada', '--last-name', 'Lovelace'];
    const table = await runCli(args, minimal());
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toMatch(/^Login link: +https:\/\/app\.example\/auth\/partner-login\/tok2001$/m);
    expect(table.stdout).not.toContain('Spouse');
    expect(table.stderr).toBe('');
    const json = await runCli([...args, '--json'], minimal());
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: '2001', spouse: null, partner_reference: { crm: 'X-1' } });
  });

  it('accounts get: a string id, a null name part and an unknown field', async () => {
    const card = await runCli(['accounts', 'get', '2001'], minimal());
    expect(card.exitCode).toBe(0);
    expect(card.stdout).toMatch(/^Name: +Lovelace$/m);
    const json = await runCli(['accounts', 'get', '2001', '--json'], minimal());
    expect(JSON.parse(json.stdout)).toEqual({ id: '2001', email: 'ada@example.com', first_name: null, last_name: 'Lovelace', status: 'active', tier: 'gold' });
  });

  it('login-link: a record with only some of the promised fields is still an issued link', async () => {
    const json = await runCli(['login-link', '2001', '--json'], minimal());
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ login_link: 'https://app.example/auth/partner-login/tokL', user_email: 'ada@example.com', expires_at: '2026-11-30T10:00:00Z', account_id: '2001' });
    const card = await runCli(['login-link', '2001'], minimal());
    expect(card.exitCode).toBe(0);
    expect(card.stdout).toMatch(/^Link: +https:\/\/app\.example\/auth\/partner-login\/tokL$/m);
    expect(card.stdout).not.toContain('undefined');
  });

  it('docs upload on {"id": N}: succeeds, reads the document back for the table, "Uploaded 2 of 2" with each id', async () => {
    const a = file('a.pdf', 'first');
    const empty = file('empty.pdf', '');
    const result = await runCli(['docs', 'upload', '2001', a, empty, '--tax-year', '2024'], minimal());
    expect(result.exitCode).toBe(0);
    const rows = result.stdout.trim().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^7\d{3}\tstored\.pdf\t2024\t0\tapplication\/pdf\t/);
    expect(result.stderr).toMatch(/^Uploaded 2 of 2 files: a\.pdf \(id 7\d{3}\), empty\.pdf \(id 7\d{3}\)\.$/m);
    expect(server.uploads.slice(-2)).toEqual([
      { filename: 'a.pdf', bytes: 5 },
      { filename: 'empty.pdf', bytes: 0 },
    ]);
  });

  it('docs upload --json prints the answer as sent; a failed read-back is a warning, exit 0', async () => {
    const json = await runCli(['docs', 'upload', '2001', file('b.pdf', 'x'), '--tax-year', '2024', '--json'], minimal());
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ id: expect.any(Number) });
    const unread = await runCli(['docs', 'upload', '2002', file('c.pdf', 'x'), '--tax-year', '2024'], minimal());
    expect(unread.exitCode).toBe(0);
    expect(unread.stdout).toMatch(/^7999\tc\.pdf\t\t1\t\t-$/m);
    expect(unread.stderr).toContain('warning: c.pdf was uploaded as document 7999, but reading it back failed: no such document');
  });

  it.each([
    ['table', []],
    ['--json', ['--json']],
    ['--ndjson', ['--ndjson']],
  ])('docs list (%s): an item that does not fit is printed as sent, with one warning naming it and the field', async (_mode, flags) => {
    const result = await runCli(['docs', 'list', '2001', ...flags], minimal());
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('twenty-four');
    expect(result.stdout).toContain('w2.pdf');
    expect(result.stderr.match(/^warning: /gm)).toHaveLength(1);
    expect(result.stderr).toMatch(/^warning: documents item 2 \(id 7002\) does not fit the contract \(tax_year .*\); it is shown as sent$/m);
  });

  it('docs get: a document with extra fields', async () => {
    const result = await runCli(['docs', 'get', '7001', '--json'], minimal());
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: '7001', checksum: 'abc' });
  });

  it('projects list: rows a filter ignored by the service are dropped with one warning; renamed, the filter works', async () => {
    const ignored = await runCli(['projects', 'list', '2001', '--status', 'completed', '--json'], minimal());
    expect(ignored.exitCode).toBe(0);
    expect(JSON.parse(ignored.stdout).projects.map((p: { id: string }) => p.id)).toEqual(['502']);
    expect(ignored.stderr.match(/^warning: /gm)).toHaveLength(1);
    expect(ignored.stderr).toContain('as if it ignored the query parameter "status"');
    expect(ignored.stderr).toContain('"projects.status" in TAXPREP_QUERY_PARAMETERS');

    const renamed = await runCli(['projects', 'list', '2001', '--status', 'completed', '--type', 'tax_planning'], minimal({ env: { TAXPREP_QUERY_PARAMETERS: 'projects.status=project_status,projects.type=project_type' } }));
    expect(renamed.exitCode).toBe(0);
    expect(renamed.stdout).toMatch(/^502\ttax_planning\t2025\tcompleted\t100%\t-$/m);
    expect(renamed.stderr).toBe('');
  });

  it('projects status: null optional fields', async () => {
    const result = await runCli(['projects', 'status', '501'], minimal());
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Outstanding: +nothing outstanding$/m);
  });

  it('deliverables list: --account and --type under the service\'s own names, from the profile', async () => {
    const home = makeHome();
    const env = { TAXPREP_API_KEY: '', NO_COLOR: '1' };
    const add = await runCli(['profiles', 'add', '--insecure-storage', 'real', '--base-url', server.baseUrl()], { home, env, input: `${MINIMAL_KEY}\n` });
    expect(add.exitCode).toBe(0);
    writeFileSync(
      join(home, '.config', 'taxprep', 'profiles.json'),
      JSON.stringify({ default_profile: 'real', profiles: { real: { base_url: server.baseUrl(), api_key: MINIMAL_KEY, query_parameters: { 'deliverables.account_id': 'account', 'deliverables.project_type': 'type' } } } }),
    );
    const result = await runCli(['deliverables', 'list', '--account', '2002', '--type', 'tax_planning', '--all', '--ndjson'], { home, env });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual(['902']);
    expect(result.stderr).toBe('');
  });

  it('deliverables get: the single-project form with a null summary', async () => {
    const result = await runCli(['deliverables', 'get', '501'], minimal());
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^View link: +https:\/\/app\.example\/view\/901$/m);
  });

  it('whoami checks the key with GET /deliverables?limit=1; a refused key exits 3; --offline asks nothing', async () => {
    const good = await runCli(['whoami'], minimal());
    expect(good.exitCode).toBe(0);
    expect(good.stdout).toMatch(/^API key: +live_…0d9e \(from TAXPREP_API_KEY\)$/m);
    expect(good.stdout).toMatch(/^Service: +accepted \(GET \/deliverables\?limit=1: HTTP 200\)$/m);
    const bad = await runCli(['whoami', '--json'], minimal({ env: { TAXPREP_API_KEY: 'live_0000000000000000bad0' } }));
    expect(bad.exitCode).toBe(3);
    expect(JSON.parse(bad.stdout).key_check).toEqual({ request: 'GET /deliverables?limit=1', status: 401, result: 'refused', code: 'INVALID_API_KEY' });
    const offline = await runCli(['whoami', '--offline', '--json'], at(`${server.origin}/nothing-here`));
    expect(offline.exitCode).toBe(0);
    expect(JSON.parse(offline.stdout).key_check).toBeNull();
    expect(offline.stderr).toContain('does not end in /v1beta');
  });

  it('api: -f __proto__.x=1 is sent as plain data', async () => {
    const result = await runCli(['api', 'POST', '/echo', '-f', '__proto__.polluted=1', '-f', 'constructor=2'], minimal());
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ received: JSON.parse('{"__proto__":{"polluted":1},"constructor":2}') });
  });
});

describe('a wrong base URL (a foreign 404 or HTML)', () => {
  it.each([
    ['accounts get', ['accounts', 'get', '2001']],
    ['docs list', ['docs', 'list', '2001']],
    ['whoami', ['whoami']],
  ])('%s: "this does not look like the service\'s API", exit 11, never "not found"', async (_name, args) => {
    const result = await runCli(args, at(server.origin));
    expect(result.exitCode).toBe(11);
    expect(result.stderr).toContain("error: this does not look like the service's API: check the base URL (it should end in /v1beta)");
    expect(result.stderr).not.toMatch(/^error: .*(not found|does not exist)/im);
  });

  it('api: a foreign 404 exits 11 too', async () => {
    const result = await runCli(['api', 'GET', '/accounts/2001'], at(server.origin));
    expect(result.exitCode).toBe(11);
  });

  it('profiles add warns about a base URL without /v1beta', async () => {
    const result = await runCli(['profiles', 'add', '--insecure-storage', 'wrong', '--base-url', server.origin, '--no-verify'], { input: `${MINIMAL_KEY}\n` });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/^warning: the base URL http:\/\/127\.0\.0\.1:\d+ does not end in \/v1beta/m);
  });
});

describe('broken and hostile services', () => {
  it('a never-ending has_more stops at --max-pages with exit 12', async () => {
    const result = await runCli(['deliverables', 'list', '--all', '--ndjson', '--max-pages', '5'], at(server.baseUrl('endless')));
    expect(result.exitCode).toBe(12);
    expect(result.stdout.trim().split('\n')).toHaveLength(5);
    // --ndjson is read by a program: its failure is the JSON error document, as with --json.
    expect(JSON.parse(result.stderr).error.message).toContain('stopped after 5 pages (5 deliverables): the service still said more follow');
  });

  it('a page that repeats, with no other offset name honoured: exit 8 naming doctor, and --json prints no document', async () => {
    const result = await runCli(['deliverables', 'list', '--all', '--json'], at(server.baseUrl('repeat')));
    expect(result.exitCode).toBe(8);
    expect(result.stdout).toBe('');
    const error = JSON.parse(result.stderr).error;
    expect(error.code).toBe('INVALID_RESPONSE');
    expect(error.message).toMatch(/^the service sent the same deliverables again at offset 2, as if it ignored the query parameter "offset"; no other name was found: /);
    expect(error.message).toContain('run `taxprep doctor`');
  });

  it('an endless body stops at --max-response-size with exit 12', async () => {
    const result = await runCli(['accounts', 'get', '2001', '--max-response-size', '1MB'], at(server.baseUrl('endless')));
    expect(result.exitCode).toBe(12);
    expect(result.stderr).toContain("error: the service's answer is larger than 1.0 MB; taxprep stopped reading it");
  });

  it('error text with escapes and bidi overrides reaches the terminal as plain text', async () => {
    const result = await runCli(['accounts', 'get', '2001'], at(server.baseUrl('hostile'), { tty: true }));
    expect(result.exitCode).toBe(5);
    expectPrintable(withoutColor(result.stdout.replace(/\r/g, '')));
    expect(result.stdout).toContain('error: account bad txt.exe');
    expect(result.stdout).toContain('account_id: must be bad txt.exe');
  });

  it('an HTML 502 is the service failing (exit 8), its snippet made safe', async () => {
    const result = await runCli(['docs', 'get', '7001', '--no-retry'], at(server.baseUrl('hostile')));
    expect(result.exitCode).toBe(8);
    expect(result.stderr).toContain("the service answered HTTP 502 with a body that is not the service's error format: <html><head><title>502 Bad Gateway bad…");
    expectPrintable(result.stderr);
  });

  it('hostile text in a list: sanitised in the table, valid JSON (bidi escaped) with --json', async () => {
    const table = await runCli(['deliverables', 'list'], at(server.baseUrl('hostile'), { tty: true }));
    expect(table.exitCode).toBe(0);
    expectPrintable(withoutColor(table.stdout.replace(/\r/g, '')));
    const json = await runCli(['deliverables', 'list', '--json'], at(server.baseUrl('hostile')));
    expect(json.stdout).not.toContain(RLO);
    expect(json.stdout).not.toContain(ESC);
    expect(JSON.parse(json.stdout).deliverables[0].title).toContain(`${RLO}txt.exe`);
  });
});

describe('uploads in a terminal', () => {
  /**
   * Runs taxprep under a pseudo-terminal of the given width (`script` from util-linux), where
   * stdin, stdout and stderr are the terminal; `keys` are typed once `ready` resolves (Ctrl-C is
   * "\u0003", which the terminal turns into SIGINT). Returns the screen's text and the exit code.
   */
  async function inTerminal(args: string[], options: { baseUrl: string; columns: number; ready?: Promise<void>; keys?: string }) {
    const home = makeHome();
    const command = `stty cols ${options.columns} rows 24; exec ${cliCommandLine(args)}`;
    const { child, result: ended } = startScanned('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.data'), TAXPREP_BASE_URL: options.baseUrl, TAXPREP_API_KEY: MINIMAL_KEY, NO_COLOR: '1' },
      extendEnv: false,
      stdin: 'pipe',
    });
    if (options.ready !== undefined) {
      await options.ready;
      child.stdin?.write(options.keys ?? '');
    }
    const result = await ended;
    const screen = String(result.stdout);
    expect(screen).not.toContain(MINIMAL_KEY);
    return { exitCode: result.exitCode, screen };
  }

  it('the progress line never outgrows the terminal: 60 columns, a long name cut to fit', async () => {
    const long = file(`${'very-long-name-'.repeat(12)}.pdf`, Buffer.alloc(3 * 1024 * 1024, 1));
    const result = await inTerminal(['docs', 'upload', '2001', long, '--tax-year', '2024'], { baseUrl: server.baseUrl(), columns: 60 });
    expect(result.exitCode).toBe(0);
    // Redraws of several lines move the cursor up (ESC [1A) and wipe (ESC [K) before they draw.
    const redraws = result.screen
      .split(/\r|\n/)
      .map((line) => line.replace(/\u001b\[(?:K|1A)/g, ''))
      .filter((line) => line.includes('%'));
    expect(redraws.length).toBeGreaterThan(0);
    for (const line of redraws) {
      expect([...line].length).toBeLessThan(60);
      // The name keeps its room; the bar and the byte counts give way first when the rate is wide.
      expect(line).toMatch(/^very-long-name-.*…( [█░]{10})? +\d+%  [\d.]+ [KM]?B/);
    }
  });

  it('Ctrl-C during a multi-file upload wipes the bar, says which files were uploaded (with ids) and which not, exit 130', async () => {
    const result = await inTerminal(['docs', 'upload', '2001', file('one.pdf', '1'), file('hang.pdf', '2'), file('three.pdf', '3'), '--tax-year', '2024', '--allow-duplicate'], {
      baseUrl: server.baseUrl('slow'),
      columns: 100,
      ready: server.hanging,
      keys: '\u0003',
    });
    expect(result.exitCode).toBe(130);
    // The finished file's line stays; the lines in flight are wiped before the table.
    expect(result.screen).toMatch(/one\.pdf ██████████ 100%  1 B in [^\r\n]*\r\n/);
    expect(result.screen).toMatch(/\r\u001b\[KID +FILENAME/);
    const lines = result.screen.split('\r\n');
    const row = lines.findIndex((line) => /^7\d{3} +stored\.pdf +2024/.test(line));
    expect(row).toBeGreaterThan(0);
    // The message is wrapped at word boundaries to the terminal's 100 columns.
    expect(lines.slice(row + 1).join(' ').trimEnd()).toMatch(
      /^error: interrupted: uploaded 1 of 3 files: one\.pdf \(id 7\d{3}\); hang\.pdf was being sent and may have been stored \(check `taxprep docs list 2001`\); not uploaded: three\.pdf$/,
    );
    for (const line of lines.slice(row + 1)) expect(line.length).toBeLessThanOrEqual(100);
  });
});
