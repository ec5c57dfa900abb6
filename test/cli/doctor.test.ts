import { once } from 'node:events';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as doctor from '../../src/commands/doctor/doctor';
import { createTestContext } from '../helpers/context';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../helpers/selfSigned';
import { exitCodeOf, fail, ok, warn } from '../../src/commands/doctor/checks';
import { decideFilter, decideOffset, findNames, telltaleValues } from '../../src/commands/doctor/names';
import { isLoopback, proxyInEffect } from '../../src/commands/doctor/proxy';
import { clockCheck, quotaCheck } from '../../src/commands/doctor/service';
import { countedApi } from '../../src/commands/doctor/budget';
import { CONFIGURABLE_QUERY_PARAMETERS } from '../../src/config/settings';
import { EXIT } from '../../src/errors';

const items = (...rows: Array<[string, string]>) => rows.map(([id, account_id]) => ({ id, account_id }));

describe('deciding whether a query parameter name is honoured', () => {
  const baseline = items(['1', 'a'], ['2', 'b'], ['3', 'a'], ['4', 'c']);

  it('only values that some items have and others lack, fewest first', () => {
    expect(telltaleValues(baseline, 'account_id')).toEqual(['b', 'c', 'a']);
    expect(telltaleValues(items(['1', 'a'], ['2', 'a']), 'account_id')).toEqual([]);
    expect(telltaleValues([], 'account_id')).toEqual([]);
  });

  it('a filter: honoured when only the value sent is kept, ignored when the unfiltered answer comes back, else undecided', () => {
    expect(decideFilter(baseline, 'account_id', ['b'], items(['2', 'b']))).toBe(0);
    expect(decideFilter(baseline, 'account_id', ['b', 'c'], items(['4', 'c']))).toBe(1);
    expect(decideFilter(baseline, 'account_id', ['b'], baseline)).toBe('ignored');
    expect(decideFilter(baseline, 'account_id', ['b'], [])).toBe('undecided');
    expect(decideFilter(baseline, 'account_id', ['b'], items(['2', 'b'], ['4', 'c']))).toBe('undecided');
    expect(decideFilter(baseline, 'account_id', ['b'], items(['9', 'z']))).toBe('undecided');
  });

  it('an offset: the item after as many as sent, the first again, or something else', () => {
    expect(decideOffset(baseline, [{ id: '2' }])).toBe(0);
    expect(decideOffset(baseline, [{ id: '3' }])).toBe(1);
    expect(decideOffset(baseline, [{ id: '1' }])).toBe('ignored');
    expect(decideOffset(baseline, [{ id: '9' }])).toBe('undecided');
    expect(decideOffset(baseline, [])).toBe('undecided');
  });
});

describe('finding the names with a scripted service', () => {
  const deliverables = [
    { id: '1', account_id: '10', project_type: 'tax_return' },
    { id: '2', account_id: '11', project_type: 'tax_planning' },
    { id: '3', account_id: '10', project_type: 'tax_return' },
  ];
  const projects = [
    { id: '5', type: 'tax_return', status: 'completed' },
    { id: '6', type: 'tax_return', status: 'completed' },
  ];
  /** Honours `names` (setting -> name) and ignores every other parameter; counts requests. */
  function service(names: Record<string, string>) {
    const asked: string[] = [];
    const raw = async (_method: string, path: string, options?: { query?: Record<string, string> }) => {
      const query = options?.query ?? {};
      asked.push(`${path}?${new URLSearchParams(query)}`);
      if (path === '/deliverables') {
        const offset = Number(query[names['deliverables.offset']!] ?? 0);
        const limit = Number(query.limit ?? 50);
        const list = deliverables.filter(
          (item) =>
            (query[names['deliverables.account_id']!] ?? item.account_id) === item.account_id && (query[names['deliverables.project_type']!] ?? item.project_type) === item.project_type,
        );
        return { status: 200, headers: {}, text: '', json: { deliverables: list.slice(offset, offset + limit) } };
      }
      return { status: 200, headers: {}, text: '', json: { projects: projects.filter((item) => (query[names['projects.type']!] ?? item.type) === item.type) } };
    };
    return { api: countedApi({ call: async () => Promise.reject(new Error('not used')), raw }), asked };
  }

  it('the defaults, one request each; too little data is "could not decide", never a guess', async () => {
    const { api, asked } = service({ ...CONFIGURABLE_QUERY_PARAMETERS });
    const findings = await findNames(api, { ...CONFIGURABLE_QUERY_PARAMETERS }, { deliverables, projects: { accountId: '10', items: projects } });
    expect(findings.map((finding) => [finding.setting, finding.outcome, finding.found])).toEqual([
      ['projects.type', 'undecided', undefined],
      ['projects.status', 'undecided', undefined],
      ['deliverables.account_id', 'honoured', 'account_id'],
      ['deliverables.project_type', 'honoured', 'project_type'],
      ['deliverables.offset', 'honoured', 'offset'],
    ]);
    expect(findings[0]!.detail).toBe('too little data: the 2 projects read all have the same type, so a filter would change nothing');
    expect(asked).toHaveLength(3);
  });

  it('other names: the configured one, then the candidates together with values that tell them apart', async () => {
    const names = { ...CONFIGURABLE_QUERY_PARAMETERS, 'deliverables.account_id': 'accountId', 'deliverables.offset': 'skip' };
    const { api, asked } = service(names);
    const findings = await findNames(api, { ...CONFIGURABLE_QUERY_PARAMETERS }, { deliverables });
    expect(findings.filter((finding) => finding.setting.startsWith('deliverables')).map((finding) => [finding.outcome, finding.found])).toEqual([
      ['other', 'accountId'],
      ['honoured', 'project_type'],
      ['other', 'skip'],
    ]);
    expect(asked).toEqual([
      '/deliverables?limit=1&offset=1',
      '/deliverables?limit=100&account_id=11',
      '/deliverables?limit=100&project_type=tax_planning',
      '/deliverables?limit=1&skip=1&start=2',
      '/deliverables?limit=100&account=11&accountId=10',
    ]);
    expect(findings[2]!.detail).toBe('accountId=10 kept only deliverables whose account_id is 10');
  });

  it('lists the key may not read are not checked, and cost no request', async () => {
    const { api, asked } = service({ ...CONFIGURABLE_QUERY_PARAMETERS });
    const findings = await findNames(api, { ...CONFIGURABLE_QUERY_PARAMETERS }, {});
    expect(findings.map((finding) => finding.outcome)).toEqual(['not_checked', 'not_checked', 'not_checked', 'not_checked', 'not_checked']);
    expect(findings[4]!.detail).toBe('the key cannot list deliverables');
    expect(asked).toEqual([]);
  });

  it('none of the names honoured is said so, with the names tried', async () => {
    const { api } = service({ ...CONFIGURABLE_QUERY_PARAMETERS, 'deliverables.offset': 'page' });
    const [offset] = (await findNames(api, { ...CONFIGURABLE_QUERY_PARAMETERS }, { deliverables })).slice(-1);
    expect(offset).toMatchObject({ outcome: 'none', detail: 'the service ignores "offset", "skip", "start"' });
  });
});

describe('the rest of the checks', () => {
  it('the proxy in effect, decided as undici decides it', () => {
    expect(proxyInEffect('https://api.example/v1beta', {})).toEqual({ because: 'neither HTTPS_PROXY nor HTTP_PROXY is set' });
    expect(proxyInEffect('https://api.example/v1beta', { HTTPS_PROXY: 'http://user:secret@proxy:3128' })).toEqual({ proxy: 'http://…@proxy:3128', because: 'HTTPS_PROXY' });
    expect(proxyInEffect('https://api.example/v1beta', { HTTP_PROXY: 'http://proxy:3128' })).toEqual({ proxy: 'http://proxy:3128', because: 'HTTP_PROXY' });
    expect(proxyInEffect('https://api.example/v1beta', { https_proxy: 'http://p:1', NO_PROXY: '.example' })).toEqual({ because: 'NO_PROXY lists .example' });
    expect(proxyInEffect('http://127.0.0.1:4010/v1beta', { HTTP_PROXY: 'http://p:1', no_proxy: '127.0.0.1:9999' })).toMatchObject({ proxy: 'http://p:1' });
    expect(isLoopback('127.0.0.1') && isLoopback('[::1]') && isLoopback('localhost') && !isLoopback('api.example')).toBe(true);
  });

  it('the clock: within 30 s is ok, beyond a warning; no Date header is a warning too', () => {
    expect(clockCheck({ serviceMs: 1_000_000, localMs: 1_000_400 }).status).toBe('ok');
    expect(clockCheck({ serviceMs: 1_000_000, localMs: 1_031_000 })).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^this machine's clock is 31s ahead of the service/) });
    expect(clockCheck(undefined).status).toBe('warn');
  });

  it('the quota: what is left, a warning when nothing is', () => {
    const now = Date.parse('2026-11-25T00:00:00Z');
    const headers = { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 30) };
    expect(quotaCheck(headers, undefined, now, 7)).toMatchObject({ status: 'warn', detail: '0 of 100 left, the window resets in 30s (doctor used 7)' });
    expect(quotaCheck({}, undefined, now, 7)).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^the service sends no X-RateLimit-\* headers/) });
  });

  it('the exit code is the first failure\'s; warnings leave it 0', () => {
    expect(exitCodeOf([ok('key', 'a', ''), warn('clock', 'b', '')])).toBe(0);
    expect(exitCodeOf([warn('clock', 'b', ''), fail('base_url', 'c', '', 'x', EXIT.NETWORK), fail('local', 'd', '', 'y', EXIT.USAGE)])).toBe(EXIT.NETWORK);
  });

  it('the budget is never passed', async () => {
    const api = countedApi({ call: async () => Promise.reject(new Error('x')), raw: async () => ({ status: 200, headers: {}, json: {}, text: '' }) }, 2);
    await api.raw('GET', '/a');
    await api.raw('GET', '/b');
    await expect(api.raw('GET', '/c')).rejects.toThrow('doctor planned more than its 2 requests');
    expect(api.used()).toBe(2);
  });
});

describe('doctor in-process against a server that is not the API', () => {
  let origin = '';
  const server = createServer((request, response) => {
    if (request.url === '/moved/v1beta/health') {
      response.writeHead(301, { location: 'https://api.example/v1beta/health' });
      response.end();
      return;
    }
    response.writeHead(404, { 'content-type': 'text/html' });
    response.end('<html><body>Not Found</body></html>');
  });
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  async function report(baseUrl: string) {
    const t = createTestContext({ env: { TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: 'acme_0123456789abcdefghij', NODE_DISABLE_COMPILE_CACHE: '1' }, globals: { json: true } });
    try {
      const code = await doctor.run(t.ctx, { offline: false, save: false });
      return { code, document: JSON.parse(t.stdout()) as { requests_used: number; checks: Array<{ name: string; status: string; detail: string; fix: string | null }> } };
    } finally {
      await t.ctx.close();
    }
  }

  it('a redirect fails with exit 8, naming where it points; the key is never sent', async () => {
    const { code, document } = await report(`${origin}/moved/v1beta`);
    expect(code).toBe(EXIT.SERVER);
    expect(document.checks.find((entry) => entry.name === 'redirects')).toMatchObject({
      status: 'fail',
      detail: 'GET /health answered HTTP 301 to https://api.example/v1beta/health; taxprep never follows a redirect with the key',
      fix: 'Use the address it points to: taxprep profiles add <name> --base-url https://api.example/v1beta',
    });
    expect(document.requests_used).toBe(1);
  });

  it('an untrusted certificate fails with exit 7 and says how to trust an own CA, with the chain it saw; nothing else is asked', async () => {
    const tls = createHttpsServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }, (_request, response) => response.end('{}'));
    tls.listen(0, '127.0.0.1');
    await once(tls, 'listening');
    try {
      const port = (tls.address() as AddressInfo).port;
      const { code, document } = await report(`https://localhost:${port}/v1beta`);
      expect(code).toBe(EXIT.NETWORK);
      expect(document.checks.find((entry) => entry.name === 'TLS')).toMatchObject({
        status: 'fail',
        detail: `the certificate of https://localhost:${port} is self-signed, and taxprep does not trust it`,
        fix: expect.stringContaining('CN=localhost, issued by CN=localhost'),
      });
      expect(document.checks.find((entry) => entry.name === 'TLS')?.fix).toContain('--ca-file, TAXPREP_CA_FILE');
      expect(document.checks.find((entry) => entry.name === 'certificate 1')?.detail).toMatch(/^CN=localhost, issued by CN=localhost; valid 2026-11-25 to 2126-11-01$/);
      expect(document.checks.find((entry) => entry.name === 'trusted by')).toMatchObject({ status: 'fail', detail: 'none: DEPTH_ZERO_SELF_SIGNED_CERT' });
      expect(document.requests_used).toBe(1);
    } finally {
      tls.close();
    }
  });

  it('a foreign 404 page fails with exit 11, saying what the base URL should be', async () => {
    const { code, document } = await report(`${origin}/v1beta`);
    expect(code).toBe(EXIT.NOT_THE_API);
    expect(document.checks.find((entry) => entry.name === 'looks like the API')).toMatchObject({ status: 'fail', detail: 'GET /health answered HTTP 404 "<html><body>Not Found</body></html>", not the service\'s health record' });
    expect(document.checks.find((entry) => entry.name === 'accepted')?.status).toBe('skip');
  });
});
