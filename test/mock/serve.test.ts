import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOptions, run, type ServeOptions } from '../../src/commands/serve/serve';
import type { Context } from '../../src/types';
import { UsageError } from '../../src/errors';
import { runCli, startCli } from '../helpers/cli';
import { startServeMock, waitForStdout } from '../helpers/serveMock';

const parse = (flags: Record<string, unknown>) => parseOptions({ args: [], flags: { mock: true, ...flags } });

describe('serve flags', () => {
  it('leaves every absent flag to the mock\'s defaults', () => {
    expect(parse({})).toEqual<ServeOptions>({
      host: undefined,
      port: undefined,
      seedPath: undefined,
      dataDir: undefined,
      rateLimits: undefined,
      uploadMaxBytes: undefined,
      faults: {},
      simulationSeed: undefined,
      openapi: false,
      quiet: false,
    });
  });

  it('requires --mock, saying that the mock is the only server', () => {
    expect(() => parseOptions({ args: [], flags: {} })).toThrow(/--mock/);
    expect(() => parseOptions({ args: [], flags: {} })).toThrow(UsageError);
  });

  it.each<[Record<string, unknown>, Partial<ServeOptions>]>([
    [{ port: '0' }, { port: 0 }],
    [{ host: '0.0.0.0' }, { host: '0.0.0.0' }],
    [{ rateLimit: 'off' }, { rateLimits: [] }],
    [{ rateLimit: '5/10s' }, { rateLimits: [{ limit: 5, windowSeconds: 10 }] }],
    [{ rateLimit: '100/1h30m' }, { rateLimits: [{ limit: 100, windowSeconds: 5400 }] }],
    [{ rateLimit: '30/m, 500/1h,1000/d' }, { rateLimits: [{ limit: 30, windowSeconds: 60 }, { limit: 500, windowSeconds: 3600 }, { limit: 1000, windowSeconds: 86_400 }] }],
    [{ maxUploadSize: '512kb' }, { uploadMaxBytes: 512 * 1024 }],
    [{ maxUploadSize: '1GB' }, { uploadMaxBytes: 1024 ** 3 }],
    [{ maxUploadSize: '1000' }, { uploadMaxBytes: 1000 }],
    [{ latency: '250', errorRate: '0.25', dropRate: '1' }, { faults: { latencyMs: 250, errorRate: 0.25, dropRate: 1 } }],
    [{ errorRate: '.5' }, { faults: { errorRate: 0.5 } }],
    [{ seed: 'demo.json', dataDir: './state' }, { seedPath: 'demo.json', dataDir: './state' }],
    [{ simulate: true }, { simulationSeed: 1 }],
    [{ simulate: '0' }, { simulationSeed: 0 }],
    [{ seed: 'demo.json', simulate: '42' }, { seedPath: 'demo.json', simulationSeed: 42 }],
  ])('parses %j', (flags, expected) => {
    expect(parse(flags)).toMatchObject(expected);
  });

  it.each([
    [{ port: '65536' }, '--port must be an integer from 0 to 65535'],
    [{ port: 'http' }, '--port must be an integer'],
    [{ host: 'a b' }, '--host must be a host name or an IP address'],
    [{ rateLimit: '100' }, '--rate-limit must be "off" or windows like 100/60s'],
    [{ rateLimit: '0/60s' }, '--rate-limit: the number of requests of window 1 (0/60s) must be an integer from 1 to 1000000000'],
    [{ rateLimit: '10/0s' }, '--rate-limit must be "off" or windows like 100/60s'],
    [{ rateLimit: '10/60s,1/400d' }, '--rate-limit: the length (in seconds) of window 2 (1/400d) must be an integer from 1 to 31622400'],
    [{ rateLimit: '1/s,1/s,1/s,1/s,1/s,1/s' }, '--rate-limit: the list of windows must have at most 5 windows'],
    [{ maxUploadSize: '10 parsecs' }, '--max-upload-size must be a size such as 100mb'],
    [{ maxUploadSize: '0' }, '--max-upload-size'],
    [{ latency: '-5' }, '--latency must be an integer from 0 to 60000'],
    [{ errorRate: '1.5' }, '--error-rate must be a number from 0 to 1'],
    [{ dropRate: 'half' }, '--drop-rate must be a number from 0 to 1'],
    [{ seed: ' ' }, '--seed must not be empty'],
    [{ simulate: 'fast' }, '--simulate must be an integer from 0 to 999999999 (the simulation\'s seed); got "fast"'],
    [{ simulate: '1000000000' }, '--simulate must be an integer from 0 to 999999999'],
  ])('refuses %j', (flags, message) => {
    expect(() => parse(flags)).toThrow(UsageError);
    expect(() => parse(flags)).toThrow(message);
  });
});

describe('taxprep serve --openapi', () => {
  it('prints the OpenAPI document for the address the flags give, without --mock, and exits 0', async () => {
    const result = await runCli(['serve', '--openapi', '--port', '4999']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    const document = JSON.parse(result.stdout) as { openapi: string; servers: Array<{ url: string }>; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: 'http://127.0.0.1:4999/v1beta' }]);
    expect(Object.keys(document.paths)).toContain('/accounts/{account_id}/login-link');
  });
});

describe('taxprep serve --mock (in process)', () => {
  const ctx = { io: { stdout: process.stdout, stderr: process.stderr }, globals: { json: true } } as unknown as Context;

  it('reports a port in use as a usage error naming the port', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const failure = run(ctx, parse({ port: String(port) }));
      await expect(failure).rejects.toThrow(UsageError);
      await expect(failure).rejects.toThrow(`Port ${port} on 127.0.0.1 is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('reports a damaged state file as a usage error naming --data-dir, the file and the problem', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'taxprep-data-'));
    writeFileSync(join(dataDir, 'state.json'), '{"state": ');
    const failure = run(ctx, parse({ port: '0', dataDir }));
    await expect(failure).rejects.toThrow(UsageError);
    await expect(failure).rejects.toThrow(`--data-dir: ${join(dataDir, 'state.json')}: a damaged state file (invalid JSON)`);
  });

  it('reports a --data-dir that is a file as a usage error naming it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'taxprep-data-')), 'not-a-directory');
    writeFileSync(file, 'x');
    const failure = run(ctx, parse({ port: '0', dataDir: file }));
    await expect(failure).rejects.toThrow(UsageError);
    await expect(failure).rejects.toThrow(`--data-dir: ${file}: cannot be used as a data directory`);
  });
});

describe('taxprep serve --mock (the real process)', () => {
  it('prints one JSON line with the URLs and keys, serves the contract, and exits 0 on SIGTERM', async () => {
    const served = await startServeMock(['--rate-limit', 'off']);
    try {
      expect(served.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1beta$/);
      expect(served.appUrl).toBe(served.baseUrl.replace(/\/v1beta$/, ''));
      const keys = Object.values(served.keys);
      expect(keys.length).toBeGreaterThanOrEqual(4);
      expect(keys.every((key) => key.startsWith('tpk_'))).toBe(true);
      const health = await fetch(`${served.baseUrl}/health`);
      expect(health.status).toBe(200);
      const deliverables = await fetch(`${served.baseUrl}/deliverables`, { headers: { authorization: `Bearer ${keys[0]}` } });
      expect(deliverables.status).toBe(200);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  it('--simulate alone plays the preparer with seed 1: projects move as the virtual clock advances', async () => {
    const { child, result } = startCli(['serve', '--mock', '--port', '0', '--json', '--simulate', '--rate-limit', 'off'], { stdin: 'ignore', keysOnStdout: true });
    const started = JSON.parse((await waitForStdout(child, (text) => text.includes('\n'))).split('\n')[0]!) as { base_url: string; app_url: string; simulation_seed: number | null; keys: Array<{ key: string }> };
    try {
      expect(started.simulation_seed).toBe(1);
      const status = async () => {
        const response = await fetch(`${started.base_url}/projects/5002/status`, { headers: { authorization: `Bearer ${started.keys[0]!.key}` } });
        return ((await response.json()) as { status: string }).status;
      };
      expect(await status()).toBe('in_progress');
      const advanced = await fetch(`${started.app_url}/_mock/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advance":"30d"}' });
      expect(advanced.status).toBe(200);
      expect(await status()).toBe('completed');
    } finally {
      child.kill('SIGTERM');
      expect((await result).exitCode).toBe(0);
    }
  });

  it('prints the URLs and keys as text within 80 columns, a line per request, and exits 0 on SIGINT', async () => {
    const { child, result: ended } = startCli(['serve', '--mock', '--port', '0'], { stdin: 'ignore', keysOnStdout: true });
    const logged = waitForStdout(child, (text) => text.split('  /v1beta/accounts/1001\n').length === 3);
    const banner = await waitForStdout(child, (text) => text.includes('Requests are listed below'));
    const baseUrl = /Base URL: +(\S+)/.exec(banner)![1]!;
    const key = /tpk_[A-Za-z0-9]{20,}/.exec(banner)![0];
    await fetch(`${baseUrl}/accounts/1001`, { headers: { authorization: `Bearer ${key}` } });
    await fetch(`${baseUrl}/accounts/1001`, { headers: { authorization: 'Bearer tpk_wrongKey000000000000000009' } });
    const lines = await logged;
    child.kill('SIGINT');
    const result = await ended;
    expect(result.exitCode).toBe(0);
    expect(banner).toMatch(/Base URL: +http:\/\/127\.0\.0\.1:\d+\/v1beta/);
    expect(banner).toMatch(/App URL: +http:\/\/127\.0\.0\.1:\d+\n/);
    expect(banner).toMatch(/Limits: +100 per 60s, 10000 per 86400s/);
    for (const line of banner.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    // The key whole on its line, what it may do beside it.
    expect(banner).toMatch(/^ {2}tpk_[A-Za-z0-9]{20,} +\S.*, partner 1\n {36}all permissions$/m);
    // time, method, status, milliseconds, the key redacted, the path; the key never whole.
    const requests = lines.slice(lines.indexOf('Requests are listed below'));
    expect(requests).toMatch(/^\d\d:\d\d:\d\d {2}GET {5}200 +\d+ ms {2}tpk_…\w{4} {2}\/v1beta\/accounts\/1001$/m);
    expect(requests).toMatch(/^\d\d:\d\d:\d\d {2}GET {5}401 +\d+ ms {2}tpk_…0009 {2}\/v1beta\/accounts\/1001$/m);
    expect(requests).not.toContain(key);
    expect(result.stderr).toContain('stopped');
  });

  it('--quiet prints no line per request', async () => {
    const { child, result: ended } = startCli(['serve', '--mock', '--port', '0', '--quiet'], { stdin: 'ignore', keysOnStdout: true });
    const banner = await waitForStdout(child, (text) => text.includes('Stop with Ctrl+C'));
    expect(banner).not.toContain('Requests are listed below');
    const baseUrl = /Base URL: +(\S+)/.exec(banner)![1]!;
    expect((await fetch(`${baseUrl}/health`)).status).toBe(200);
    child.kill('SIGINT');
    const result = await ended;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toContain('/v1beta/health');
  });

  it('refuses an invalid fixture with exit 2, naming the file, the path in it and the rule', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-seed-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ partners: [{ id: 1, name: 'Acme', api_keys: [{ key: 'short', label: 'main' }] }] }));
    const result = await runCli(['serve', '--mock', '--port', '0', '--seed', file]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(file);
    expect(result.stderr).toContain('partners[0].api_keys[0].key');
    expect(result.stderr).toContain('must be a well-formed API key');
  });
});
