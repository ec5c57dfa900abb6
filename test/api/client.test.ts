import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/types';
import { ApiError, CliError, EXIT, NetworkError, NotTheApiError, UsageError } from '../../src/errors';
import { VERSION } from '../../src/api/version';
import { createTestContext, type TestContext, type TestContextOptions } from '../helpers/context';
import { startMock, type RunningMock } from '../helpers/mock';

let mock: RunningMock;
const opened: TestContext[] = [];

beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(() => mock.close());
afterEach(async () => {
  mock.deps.settings.faults = { latencyMs: 0, errorRate: 0, dropRate: 0 };
  mock.deps.settings.rateLimits = [];
  // Past every rate-limit window a test opened, so that the next one starts with a fresh allowance.
  await mock.deps.clock.advance(3_600_000);
  await Promise.all(opened.splice(0).map((t) => t.ctx.close()));
});

/** Sleeping advances the mock's virtual clock instead of waiting; every wait is recorded. */
function virtualClock(onSleep?: (ms: number) => void): Clock & { waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    now: () => mock.deps.clock.now(),
    async sleep(ms) {
      waits.push(ms);
      onSleep?.(ms);
      await mock.deps.clock.advance(ms);
    },
  };
}

function context(options: { key?: string; baseUrl?: string; globals?: TestContextOptions['globals']; clock?: Clock; env?: Record<string, string>; tty?: TestContextOptions['tty'] } = {}) {
  const t = createTestContext({
    tty: options.tty,
    env: { TAXPREP_BASE_URL: options.baseUrl ?? mock.baseUrl, TAXPREP_API_KEY: options.key ?? mock.keys.acme, ...options.env },
    globals: options.globals,
    clock: options.clock ?? virtualClock(),
    random: () => 0.5,
  });
  opened.push(t);
  return t;
}

async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('answers', () => {
  it('parses a success with the contract schema and keeps the document as sent', async () => {
    const api = await context().ctx.api();
    const answer = await api.call('getAccount', { params: { account_id: 1001 } });
    expect(answer.status).toBe(200);
    expect(answer.data.email).toBe('maria.gonzalez@example.com');
    expect(answer.json).toEqual(answer.data);
  });

  it('follows limit/offset across pages until has_more is false', async () => {
    const api = await context().ctx.api();
    const offsets: number[] = [];
    let total = 0;
    for await (const page of api.pages('listDeliverables', { query: { limit: 1 } })) {
      offsets.push(page.data.deliverables.length);
      total = page.data.total_count ?? 0;
    }
    expect(total).toBeGreaterThan(1);
    expect(offsets).toEqual(Array(total).fill(1));
  });

  it('streams an upload as multipart form data, reporting progress up to the file size', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'taxprep-upload-')), 'w2.pdf');
    writeFileSync(path, Buffer.alloc(200_000, 7));
    const progress: number[] = [];
    const api = await context().ctx.api();
    const answer = await api.upload(
      1001,
      { path, filename: 'w2.pdf', contentType: 'application/pdf', size: 200_000 },
      { tax_year: 2025, description: 'W-2 from employer' },
      { onProgress: (sent) => progress.push(sent) },
    );
    expect(answer.status).toBe(201);
    expect(answer.data).toMatchObject({ filename: 'w2.pdf', tax_year: 2025, description: 'W-2 from employer' });
    const stored = await api.call('getDocument', { params: { document_id: Number(answer.data.id) } });
    expect(stored.data).toMatchObject({ file_size: 200_000, file_type: 'application/pdf' });
    expect(progress.at(-1)).toBe(200_000);
    expect(progress.length).toBeGreaterThan(1);
  });

  it('checks input with the contract before sending', async () => {
    const api = await context().ctx.api();
    const error = await failure(api.call('getAccount', { params: { account_id: 'abc' } }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain('account_id must be a positive integer');
  });
});

describe('errors map to exit codes with a next step', () => {
  const cases: Array<{ name: string; key: string; call: (api: Awaited<ReturnType<TestContext['ctx']['api']>>) => Promise<unknown>; code: string; exit: number; hint: RegExp }> = [
    { name: 'unknown key', key: 'tpk_NotAKnownKey0000000000000000', call: (api) => api.call('getAccount', { params: { account_id: 1001 } }), code: 'INVALID_API_KEY', exit: EXIT.AUTH, hint: /taxprep profiles add|TAXPREP_API_KEY/ },
    { name: 'expired key', key: 'EXPIRED', call: (api) => api.call('getAccount', { params: { account_id: 1001 } }), code: 'EXPIRED_API_KEY', exit: EXIT.AUTH, hint: /operator for a new key/ },
    { name: 'read-only key writing', key: 'READONLY', call: (api) => api.call('createLoginLink', { params: { account_id: 1001 }, body: {} }), code: 'INSUFFICIENT_PERMISSIONS', exit: EXIT.AUTH, hint: /login_links:write/ },
    { name: "another partner's account", key: 'BEACON', call: (api) => api.call('getAccount', { params: { account_id: 1001 } }), code: 'ACCESS_DENIED', exit: EXIT.AUTH, hint: /right profile/ },
    { name: 'unknown account', key: 'ACME', call: (api) => api.call('getAccount', { params: { account_id: 999999 } }), code: 'ACCOUNT_NOT_FOUND', exit: EXIT.NOT_FOUND, hint: /.*/ },
    { name: 'suspended account', key: 'ACME', call: (api) => api.call('createLoginLink', { params: { account_id: 1003 }, body: {} }), code: 'ACCOUNT_SUSPENDED', exit: EXIT.REJECTED, hint: /[Cc]ontact support/ },
  ];
  const keyFor = (key: string) => ({ EXPIRED: mock.keys.expired, READONLY: mock.keys.readOnly, BEACON: mock.keys.beacon, ACME: mock.keys.acme })[key] ?? key;

  it.each(cases)('$name -> $code, exit $exit', async ({ key, call, code, exit, hint }) => {
    const api = await context({ key: keyFor(key) }).ctx.api();
    const error = await failure(call(api));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe(code);
    expect(error.exitCode).toBe(exit);
    if (code !== 'ACCOUNT_NOT_FOUND') expect(error.hint).toMatch(hint);
  });

  it('refuses a malformed key locally with the service code and hint, and sends nothing', async () => {
    mock.deps.requestLog.clear();
    const t = context({ key: 'not-a-key' });
    const error = await failure(t.ctx.api());
    expect(error.code).toBe('INVALID_API_KEY');
    expect(error.exitCode).toBe(EXIT.AUTH);
    expect(error.hint).toContain('<prefix>_<random>');
    expect(mock.deps.requestLog.entries()).toHaveLength(0);
  });

  it('without any key: NO_API_KEY, exit 3, saying how to set one', async () => {
    const t = createTestContext({ env: { TAXPREP_BASE_URL: mock.baseUrl } });
    opened.push(t);
    const error = await failure(t.ctx.api());
    expect(error.code).toBe('NO_API_KEY');
    expect(error.exitCode).toBe(EXIT.AUTH);
    expect(error.hint).toMatch(/profiles add.*TAXPREP_API_KEY/);
  });
});

describe('retries', () => {
  it('waits out a 429 until the window resets, saying so, then succeeds', async () => {
    mock.deps.settings.rateLimits = [{ limit: 1, windowSeconds: 30 }];
    const clock = virtualClock();
    const t = context({ clock, key: mock.keys.beacon });
    const api = await t.ctx.api();
    await api.call('getAccount', { params: { account_id: 2001 } });
    const second = await api.call('getAccount', { params: { account_id: 2001 } });
    expect(second.status).toBe(200);
    // One wait, as long as the service asked (at most the window, plus a margin), was enough.
    expect(clock.waits).toHaveLength(1);
    expect(clock.waits[0]).toBeGreaterThan(100);
    expect(clock.waits[0]).toBeLessThanOrEqual(30_100);
    expect(t.stderr()).toMatch(/^rate limited; retrying in (\d+ms|[\d.]+s) \(attempt 2 of 4\)$/m);
  });

  it('gives up after --max-retries with the rate-limited exit code', async () => {
    mock.deps.settings.rateLimits = [{ limit: 1, windowSeconds: 30 }];
    // Each wait is too short for the window to reset (the clock does not move): every retry is refused.
    const t = context({ clock: { now: () => mock.deps.clock.now(), sleep: async () => undefined }, key: mock.keys.beacon, globals: { maxRetries: 2 } });
    const api = await t.ctx.api();
    await api.call('getAccount', { params: { account_id: 2001 } });
    const error = await failure(api.call('getAccount', { params: { account_id: 2001 } }));
    expect(error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(error.exitCode).toBe(EXIT.RATE_LIMITED);
    expect((error as ApiError).retryAfterSeconds).toBeGreaterThan(0);
    expect(t.stderr().match(/rate limited; retrying/g)).toHaveLength(2);
  });

  it('does not start a wait that would end past the 2-minute retry budget', async () => {
    mock.deps.settings.rateLimits = [{ limit: 1, windowSeconds: 86_400 }];
    const clock = virtualClock();
    const t = context({ clock, key: mock.keys.beacon });
    const api = await t.ctx.api();
    await api.call('getAccount', { params: { account_id: 2001 } });
    const error = await failure(api.call('getAccount', { params: { account_id: 2001 } }));
    expect(error.exitCode).toBe(EXIT.RATE_LIMITED);
    expect(clock.waits).toEqual([]);
    expect(t.stderr()).toMatch(/^rate limited; not retrying: waiting \d+(ms|[dhms])( \d+[hms])? would pass the 2m retry budget$/m);
  });

  it('--no-retry reports the first 429 at once', async () => {
    mock.deps.settings.rateLimits = [{ limit: 1, windowSeconds: 30 }];
    const clock = virtualClock();
    const t = context({ clock, key: mock.keys.beacon, globals: { retry: false } });
    const api = await t.ctx.api();
    await api.call('getAccount', { params: { account_id: 2001 } });
    const error = await failure(api.call('getAccount', { params: { account_id: 2001 } }));
    expect(error.exitCode).toBe(EXIT.RATE_LIMITED);
    expect(clock.waits).toEqual([]);
    expect(t.stderr()).toBe('');
  });

  it('retries a GET answered 503 with backoff, and succeeds once the service recovers', async () => {
    mock.deps.settings.faults = { latencyMs: 0, errorRate: 1, dropRate: 0 };
    const clock = virtualClock(() => {
      mock.deps.settings.faults = { latencyMs: 0, errorRate: 0, dropRate: 0 };
    });
    const t = context({ clock });
    const answer = await (await t.ctx.api()).call('getAccount', { params: { account_id: 1001 } });
    expect(answer.status).toBe(200);
    expect(clock.waits).toHaveLength(1);
    expect(t.stderr()).toMatch(/^service unavailable \(503\); retrying (now|in \d+ms|in [\d.]+s) \(attempt 2 of 4\)$/m);
  });

  it('never retries a POST that reached the service (503), so nothing is done twice', async () => {
    mock.deps.settings.faults = { latencyMs: 0, errorRate: 1, dropRate: 0 };
    const clock = virtualClock();
    const t = context({ clock });
    const error = await failure((await t.ctx.api()).call('createLoginLink', { params: { account_id: 1001 }, body: {} }));
    expect(error.exitCode).toBe(EXIT.SERVER);
    expect(clock.waits).toEqual([]);
  });

  it('retries a GET whose connection was dropped, but not a POST', async () => {
    mock.deps.settings.faults = { latencyMs: 0, errorRate: 0, dropRate: 1 };
    const clock = virtualClock(() => {
      mock.deps.settings.faults = { latencyMs: 0, errorRate: 0, dropRate: 0 };
    });
    const get = context({ clock });
    expect((await (await get.ctx.api()).call('getAccount', { params: { account_id: 1001 } })).status).toBe(200);
    expect(get.stderr()).toMatch(/connection reset; retrying/);

    mock.deps.settings.faults = { latencyMs: 0, errorRate: 0, dropRate: 1 };
    const post = context({ clock: virtualClock() });
    const error = await failure((await post.ctx.api()).call('createLoginLink', { params: { account_id: 1001 }, body: {} }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(EXIT.NETWORK);
    expect(post.stderr()).not.toMatch(/retrying/);
  });
});

describe('no answer', () => {
  it('a closed port: NETWORK_ERROR naming the address, reported after the second refusal (nothing was sent), exit 7', async () => {
    const port = await closedPort();
    const t = context({ baseUrl: `http://127.0.0.1:${port}/v1beta`, clock: { now: () => new Date(), sleep: async () => undefined } });
    const error = await failure((await t.ctx.api()).call('createLoginLink', { params: { account_id: 1001 }, body: {} }));
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.exitCode).toBe(EXIT.NETWORK);
    expect(error.message).toBe(`nothing is listening at http://127.0.0.1:${port}: is the service (or \`taxprep serve --mock\`) running?`);
    expect(t.stderr()).toMatch(/^connection refused; retrying in (\d+ms|[\d.]+s) \(attempt 2 of 4\)\n$/);
  });

  it('on a terminal, retry notes are one line rewritten in place, ended before the error', async () => {
    mock.deps.settings.faults = { latencyMs: 0, errorRate: 1, dropRate: 0 };
    const t = context({ tty: { stderr: true } });
    const error = await failure((await t.ctx.api()).call('getAccount', { params: { account_id: 1001 } }));
    expect(error.exitCode).toBe(EXIT.SERVER);
    const rewrite = '\r\u001b[2K';
    expect(t.stderr()).toMatch(/^(\r\u001b\[2Kservice unavailable \(503\); retrying in (\d+ms|[\d.]+s) \(attempt [234] of 4\)){3}\n$/);
    expect(t.stderr().split(rewrite)).toHaveLength(4);
  });

  it('a slow service: TIMEOUT after --timeout, exit 7', async () => {
    mock.deps.settings.faults = { latencyMs: 3000, errorRate: 0, dropRate: 0 };
    const t = context({ globals: { timeoutMs: 200 } });
    const error = await failure((await t.ctx.api()).call('getAccount', { params: { account_id: 1001 } }));
    expect(error.code).toBe('TIMEOUT');
    expect(error.exitCode).toBe(EXIT.NETWORK);
    expect(error.message).toContain('within 200ms');
    expect(error.hint).toContain('--timeout');
  });
});

describe('what goes on the wire', () => {
  let server: Server;
  let seen: Array<{ url: string; headers: IncomingHttpHeaders }>;
  let baseUrl: string;

  beforeAll(async () => {
    seen = [];
    server = createServer((request, response) => {
      seen.push({ url: request.url ?? '', headers: request.headers });
      if (request.url?.includes('redirect')) {
        response.writeHead(302, { location: 'http://elsewhere.invalid/' }).end();
      } else if (request.url?.includes('not-json')) {
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy login</html>');
      } else {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","timestamp":"2026-01-01T00:00:00Z","extra":1}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends User-Agent taxprep/<version> and the key as a bearer token', async () => {
    seen.length = 0;
    const api = await context({ baseUrl }).ctx.api();
    await api.raw('GET', '/accounts/1');
    expect(seen[0]?.url).toBe('/v1beta/accounts/1');
    expect(seen[0]?.headers['user-agent']).toBe(`taxprep/${VERSION}`);
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${mock.keys.acme}`);
  });

  it('does not send the key to health, and keeps unknown fields in json', async () => {
    seen.length = 0;
    const answer = await (await context({ baseUrl }).ctx.api({ requireKey: false })).call('health');
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(answer.json).toEqual({ status: 'ok', timestamp: '2026-01-01T00:00:00Z', extra: 1 });
  });

  it('never follows a redirect (the key stays on the base URL origin)', async () => {
    seen.length = 0;
    const api = await context({ baseUrl }).ctx.api();
    const answer = await api.raw('GET', '/redirect');
    expect(answer.status).toBe(302);
    expect(seen).toHaveLength(1);
    const error = await failure(api.raw('GET', 'http://elsewhere.invalid/x'));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain('the API key is only sent there');
  });

  it('a 200 that is not JSON is not the service: NOT_THE_API, exit 11, naming the base URL', async () => {
    const api = await context({ baseUrl: `${baseUrl}/not-json` }).ctx.api();
    const error = await failure(api.call('getAccount', { params: { account_id: 1 } }));
    expect(error).toBeInstanceOf(NotTheApiError);
    expect(error.exitCode).toBe(EXIT.NOT_THE_API);
    expect(error.message).toBe("this does not look like the service's API: check the base URL (it should end in /v1beta)");
  });

  it('--verbose traces request and response on stderr with the key redacted', async () => {
    const t = context({ baseUrl, globals: { verbose: true } });
    await (await t.ctx.api()).raw('GET', '/accounts/1');
    expect(t.stderr()).toMatch(/^> GET http:\/\/127\.0\.0\.1:\d+\/v1beta\/accounts\/1$/m);
    expect(t.stderr()).toContain(`> authorization: Bearer tpk_…${mock.keys.acme.slice(-4)}`);
    expect(t.stderr()).toMatch(/^< 200 \(\d+ ms\)$/m);
    expect(t.stderr()).not.toContain(mock.keys.acme);
  });

  it('goes through HTTP_PROXY (CONNECT), and not for hosts in NO_PROXY', async () => {
    const proxy = await startConnectProxy();
    try {
      seen.length = 0;
      const proxied = context({ baseUrl, env: { HTTP_PROXY: proxy.url } });
      await (await proxied.ctx.api()).raw('GET', '/accounts/1');
      expect(proxy.tunnels).toEqual([new URL(baseUrl).host]);
      expect(seen).toHaveLength(1);

      const direct = context({ baseUrl, env: { HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' } });
      await (await direct.ctx.api()).raw('GET', '/accounts/1');
      expect(proxy.tunnels).toHaveLength(1);
      expect(seen).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A minimal HTTP proxy that only tunnels (CONNECT), counting the hosts it was asked for. */
async function startConnectProxy(): Promise<{ url: string; tunnels: string[]; close(): Promise<void> }> {
  const tunnels: string[] = [];
  const proxy = createServer((_request, response) => response.writeHead(405).end());
  proxy.on('connect', (request, clientSocket, head) => {
    const target = request.url ?? '';
    tunnels.push(target);
    const [host, port] = target.split(':');
    const upstream = connect(Number(port), host, () => {
      clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(clientSocket).pipe(upstream);
    });
    upstream.on('error', () => clientSocket.destroy());
    clientSocket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
