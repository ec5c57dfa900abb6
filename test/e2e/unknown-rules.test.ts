import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINIMAL_KEY, startContractMinimalServer, type MinimalServer, type MinimalServerOptions } from '../helpers/contractMinimalServer';
import { sparseFile } from '../helpers/sparseFile';
import { makeHome, registerSecret, runCli } from '../helpers/cli';

/**
 * The rules the contract leaves "not shown" (upload size and types, the deliverable list's offset
 * name), run as a user runs them against five services we did not write that each choose them
 * differently (test/helpers/contractMinimalServer.ts): the client must take what the lenient ones
 * take, learn what the strict ones say in their refusals, and never end a short list with exit 0.
 */

const MB = 1024 * 1024;
const files = mkdtempSync(join(tmpdir(), 'taxprep-rules-'));
const servers: MinimalServer[] = [];

beforeAll(() => registerSecret(MINIMAL_KEY));
afterAll(async () => {
  for (const server of servers) await server.close();
});

async function start(options: MinimalServerOptions): Promise<MinimalServer> {
  const server = await startContractMinimalServer(options);
  servers.push(server);
  return server;
}

/** The server of a describe block, started before its tests (and closed after all). */
function serverWith(options: MinimalServerOptions): MinimalServer {
  let started: MinimalServer | undefined;
  beforeAll(async () => {
    started = await start(options);
  });
  return new Proxy({} as MinimalServer, { get: (_target, key) => Reflect.get(started!, key) });
}

const sparse = (name: string, bytes: number) => sparseFile(files, name, bytes);

function file(name: string, content = 'x'): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

function cli(server: MinimalServer, home: string) {
  return (args: string[]) => runCli(args, { home, env: { TAXPREP_BASE_URL: server.baseUrl(), TAXPREP_API_KEY: MINIMAL_KEY, NO_COLOR: '1' } });
}

const uploadsSent = (server: MinimalServer) => server.requests.filter((request) => request.startsWith('POST ')).length;

describe('a lenient service: 500 MB, any type', () => {
  const server = serverWith({ uploadRules: { maxBytes: 500 * MB } });

  it('a 120 MB file reaches the service and is stored (nothing refuses it before sending)', async () => {
    const run = cli(server, makeHome());
    const result = await run(['docs', 'upload', '2001', sparse('scan-120mb.pdf', 120 * MB), '--tax-year', '2024', '--json', '--allow-duplicate']);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: 7000 + server.uploads.length });
    expect(server.uploads.at(-1)).toEqual({ filename: 'scan-120mb.pdf', bytes: 120 * MB });
  }, 60_000);

  it('a .zip, a type taxprep has no media type for, goes as application/octet-stream and the service takes it', async () => {
    const run = cli(server, makeHome());
    const result = await run(['docs', 'upload', '2001', file('returns.zip', 'PK\u0003\u0004'), '--tax-year', '2024', '--json', '--allow-duplicate']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    expect(server.uploads.at(-1)).toEqual({ filename: 'returns.zip', bytes: 4 });
  });
});

describe('free text the contract gives no length', () => {
  const server = serverWith({});

  it("a long description and email subject reach the service: the mock's limits (1000, 200 characters) are not the client's", async () => {
    const run = cli(server, makeHome());
    const upload = await run(['docs', 'upload', '2001', file('long.pdf'), '--tax-year', '2024', '--description', 'd'.repeat(1500), '--allow-duplicate', '--json']);
    expect(upload.exitCode).toBe(0);
    const link = await run(['login-link', '2001', '--custom-subject', 's'.repeat(300), '--custom-message', 'm'.repeat(2500), '--json']);
    expect(link.exitCode).toBe(0);
    expect(server.requests.at(-1)).toBe('POST /v1beta/accounts/2001/login-link');
  });
});

describe('the cost of the duplicate check', () => {
  const server = serverWith({});

  it('one list request for the account and year however many files, each shown by --verbose; none with --allow-duplicate', async () => {
    const run = cli(server, makeHome());
    const names = ['c1.pdf', 'c2.pdf', 'c3.pdf'].map((name) => file(name));
    const first = server.requests.length;
    const result = await run(['docs', 'upload', '2002', ...names, '--tax-year', '2024', '--verbose']);
    expect(result.exitCode).toBe(0);
    expect(server.requests.slice(first).filter((request) => request.startsWith('GET /v1beta/accounts/2002/documents'))).toEqual(['GET /v1beta/accounts/2002/documents?tax_year=2024&limit=100&offset=0']);
    expect(server.requests.slice(first).filter((request) => request.startsWith('POST '))).toHaveLength(3);
    expect(result.stderr.match(/^> GET .*\/accounts\/2002\/documents\?tax_year=2024/gm)).toHaveLength(1);
    expect(result.stderr.match(/^> POST .*\/accounts\/2002\/documents/gm)).toHaveLength(3);

    const skipped = server.requests.length;
    const allowed = await run(['docs', 'upload', '2002', ...names, '--tax-year', '2024', '--allow-duplicate']);
    expect(allowed.exitCode).toBe(0);
    expect(server.requests.slice(skipped).filter((request) => request.startsWith('GET /v1beta/accounts/2002/documents'))).toEqual([]);
  });

  it('a badly answered list does not fail an upload that works: a warning, then the upload, exit 0', async () => {
    const run = cli(server, makeHome());
    const result = await run(['docs', 'upload', '2003', file('w9.pdf'), '--tax-year', '2024', '--json']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/^warning: could not check whether account 2003 already has these files for 2024 \(its document list failed: .+\); uploading anyway\n$/);
    expect(JSON.parse(result.stdout)).toHaveProperty('id');
  });
});

describe('a strict service: 10 MB', () => {
  let server: MinimalServer;
  const home = makeHome();
  beforeAll(async () => {
    server = await start({ uploadRules: { maxBytes: 10 * MB } });
  });

  it("reports the service's refusal with its limit, remembers it (0600), and refuses the next such file before sending, naming where the rule came from", async () => {
    const run = cli(server, home);
    const refused = await run(['docs', 'upload', '2001', sparse('big-a.pdf', 120 * MB), '--tax-year', '2024']);
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toContain('error: File exceeds the maximum size\n');
    expect(refused.stderr).toContain('The service named an upload limit of 10.0 MB: taxprep remembers it for this profile and base URL');
    const learned = join(home, '.config', 'taxprep', 'learned.json');
    expect(statSync(learned).mode & 0o777).toBe(0o600);
    const sent = uploadsSent(server);

    const before = await run(['docs', 'upload', '2001', sparse('big-b.pdf', 120 * MB), '--tax-year', '2024']);
    expect(before.exitCode).toBe(2);
    expect(before.stderr).toMatch(
      /^error: nothing was uploaded: \S+big-b\.pdf is 120\.0 MB, over the service's upload limit of 10\.0 MB \(learned from the service \(HTTP 413 FILE_TOO_LARGE\) on \d{4}-\d\d-\d\d\)\n/,
    );
    expect(uploadsSent(server)).toBe(sent);

    const small = await run(['docs', 'upload', '2001', sparse('small.pdf', 2 * MB), '--tax-year', '2024', '--json']);
    expect(small.exitCode).toBe(0);
    expect(uploadsSent(server)).toBe(sent + 1);

    const doctor = await run(['doctor', '--offline']);
    expect(doctor.stdout).toMatch(/upload size +at most 10\.0 MB \(learned from the service \(HTTP 413 FILE_TOO_LARGE\) on \d{4}-\d\d-\d\d\)/);
    expect(doctor.stdout).toMatch(/upload types +not known \(the contract does not show it\)/);
  }, 60_000);

  it("a profile's upload_max_size, set by hand, is the rule, and the message says so", async () => {
    const own = makeHome();
    const run = (args: string[]) => runCli(args, { home: own, env: { NO_COLOR: '1' } });
    const config = join(own, '.config', 'taxprep');
    await runCli(['profiles', 'add', '--insecure-storage', 'strict', '--base-url', server.baseUrl()], { home: own, input: `${MINIMAL_KEY}\n` });
    const stored = JSON.parse((await import('node:fs')).readFileSync(join(config, 'profiles.json'), 'utf8'));
    stored.profiles.strict.upload_max_size = '5MB';
    writeFileSync(join(config, 'profiles.json'), JSON.stringify(stored));
    const sent = uploadsSent(server);
    const result = await run(['docs', 'upload', '2001', sparse('six.pdf', 6 * MB), '--tax-year', '2024']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('six.pdf is 6.0 MB, over the service\'s upload limit of 5.0 MB (set in profile "strict" (upload_max_size))');
    expect(uploadsSent(server)).toBe(sent);
  });
});

describe('a service whose type list has no PDF', () => {
  const server = serverWith({ uploadRules: { types: ['image/png', 'image/jpeg'] } });

  it('reports the refusal with its details, remembers the list, and refuses the next PDF before sending', async () => {
    const run = cli(server, makeHome());
    const refused = await run(['docs', 'upload', '2001', file('w2-2024.pdf'), '--tax-year', '2024']);
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toContain('error: File type application/pdf is not allowed\n  allowed_types: image/png; image/jpeg\n');
    expect(refused.stderr).toContain('The service named the file types image/png, image/jpeg: taxprep remembers it');
    const sent = uploadsSent(server);
    const before = await run(['docs', 'upload', '2001', file('1099.pdf'), '--tax-year', '2024']);
    expect(before.exitCode).toBe(2);
    expect(before.stderr).toMatch(
      /1099\.pdf is of a type \(\.pdf, sent as application\/pdf\) the service does not take: it takes image\/png, image\/jpeg \(learned from the service \(HTTP 400 INVALID_FILE_TYPE\) on \d{4}-\d\d-\d\d\)/,
    );
    expect(uploadsSent(server)).toBe(sent);
    const png = await run(['docs', 'upload', '2001', file('scan.png'), '--tax-year', '2024', '--json']);
    expect(png.exitCode).toBe(0);
  });

  it('in a multi-file upload, a refused file is reported and the rest go on: one summary, exit 9', async () => {
    const run = cli(server, makeHome());
    const sent = uploadsSent(server);
    const result = await run(['docs', 'upload', '2001', file('a.png'), file('b.pdf'), file('c.pdf'), file('d.png'), '--tax-year', '2024', '--allow-duplicate']);
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toContain('error: b.pdf was not uploaded: File type application/pdf is not allowed\n');
    // c.pdf meets the rule b.pdf's refusal taught: kept back, never sent.
    expect(result.stderr).toMatch(/error: c\.pdf was not uploaded: c\.pdf is of a type \(\.pdf, sent as application\/pdf\) the service does not take: .*; it was not sent\n/);
    expect(result.stderr).toMatch(/Uploaded 2 of 4 files: a\.png \(id \d+\), d\.png \(id \d+\); refused: b\.pdf, c\.pdf\.\n$/);
    expect(uploadsSent(server)).toBe(sent + 3);
  });
});

describe('a deliverable list whose offset is named `skip`', () => {
  const server = serverWith({ names: { 'deliverables.offset': 'skip' }, deliverables: 250 });

  it('--all finds the name itself, says so once, returns the whole list with exit 0, and remembers it', async () => {
    const run = cli(server, makeHome());
    const first = server.requests.length;
    const result = await run(['deliverables', 'list', '--all', '--json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).deliverables.map((item: { id: string }) => Number(item.id))).toEqual(Array.from({ length: 250 }, (_, index) => 3001 + index));
    expect(result.stderr.match(/note: /g)).toHaveLength(1);
    expect(result.stderr).toContain('note: the service ignores the query parameter "offset" and honours "skip" as the offset of deliverables; taxprep uses "skip" for this profile and base URL from now on');
    // Three pages, the repeated one, and one request to tell the names apart: at most three beyond the pages.
    const asked = server.requests.slice(first);
    expect(asked).toEqual([
      'GET /v1beta/deliverables?limit=100&offset=0',
      'GET /v1beta/deliverables?limit=100&offset=100',
      'GET /v1beta/deliverables?limit=1&skip=1&start=2',
      'GET /v1beta/deliverables?limit=100&skip=100',
      'GET /v1beta/deliverables?limit=100&skip=200',
    ]);

    const again = await run(['deliverables', 'list', '--all', '--ndjson']);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout.trim().split('\n')).toHaveLength(250);
    expect(server.requests.slice(-3)).toEqual(['GET /v1beta/deliverables?limit=100&skip=0', 'GET /v1beta/deliverables?limit=100&skip=100', 'GET /v1beta/deliverables?limit=100&skip=200']);
  });
});

describe('a deliverable list that ignores every offset', () => {
  const server = serverWith({ ignoreOffset: true, deliverables: 250 });

  it('--all never exits 0 on a short list: the pages read, then an error naming doctor, exit 8', async () => {
    const run = cli(server, makeHome());
    const lines = await run(['deliverables', 'list', '--all', '--ndjson']);
    expect(lines.exitCode).toBe(8);
    expect(lines.stdout.trim().split('\n')).toHaveLength(100);
    const error = JSON.parse(lines.stderr).error as { code: string; message: string; hint?: string };
    expect(error.code).toBe('INVALID_RESPONSE');
    expect(error.message).toMatch(/^the service sent the same deliverables again at offset 100, as if it ignored the query parameter "offset"; no other name was found: the service ignores "offset", "skip", "start" \(1 request spent looking\); /);
    expect(JSON.stringify(error)).toContain('run `taxprep doctor` to see which names the service honours');

    const json = await run(['deliverables', 'list', '--all', '--json']);
    expect(json.exitCode).toBe(8);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr).error.code).toBe('INVALID_RESPONSE');
  });
});
