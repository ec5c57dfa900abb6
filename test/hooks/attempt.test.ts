import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventEntry } from '../../src/batch/ledgers/outbox';
import { attemptDelivery } from '../../src/hooks/attempt';
import { generateSecret } from '../../src/hooks/sign';
import type { Hook } from '../../src/hooks/store';

/**
 * One attempt of an HTTP hook, in process, against receivers on 127.0.0.1: what each answer
 * becomes (the outcome `watch` and `hooks deliver` record), and the one deadline timer shared by
 * attempts in flight. test/e2e/hooks.test.ts runs the same code through the CLI.
 */

const servers: Server[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const agent of agents.splice(0)) await agent.destroy();
});

async function receiver(answer: (request: IncomingMessage, response: ServerResponse, body: string) => void): Promise<string> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => answer(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/hook?from=test`;
}

function hookFor(url: string, overrides: Partial<Hook> = {}): Hook {
  return {
    id: 'hk_test',
    profile: null,
    base_url: 'http://127.0.0.1:9/v1beta',
    url,
    events: ['*'],
    format: 'standard',
    headers: [['X-Partner', 'acme']],
    retry_schedule_ms: [1000],
    timeout_ms: 5000,
    rate: null,
    ordered: false,
    allow_http: true,
    disable_after_ms: 86_400_000,
    secrets: [{ secret: generateSecret(), expires_at: null }],
    enabled: true,
    disabled_reason: null,
    created_at: '2026-11-25T10:00:00.000Z',
    ...overrides,
  };
}

const seenAt = '2026-11-25T10:00:00.000Z';
const event: EventEntry = { type: 'event', id: 'msg_attempt1', event: 'project.progress', hooks: ['hk_test'], seen_at: seenAt, at: seenAt };
const body = JSON.stringify({ type: 'project.progress', timestamp: seenAt, data: { project_id: 5001 } });

function attempt(hook: Hook, now = new Date()) {
  const agent = new Agent();
  agents.push(agent);
  return attemptDelivery(hook, event, body, hook.secrets!.map((secret) => secret.secret), now, () => Promise.resolve(agent));
}

describe('an HTTP attempt', () => {
  it('POSTs the body to the path and query, signed, with the hook\'s own headers; a 2xx is delivered', async () => {
    const seen: Array<{ path: string | undefined; headers: IncomingMessage['headers']; body: string }> = [];
    const url = await receiver((request, response, received) => {
      seen.push({ path: request.url, headers: request.headers, body: received });
      response.writeHead(202).end();
    });
    const hook = hookFor(url);
    expect(await attempt(hook)).toEqual({ kind: 'delivered', detail: 'HTTP 202' });
    // A second attempt to the same hook sends the same headers (the hook's parts are made once).
    expect(await attempt(hook)).toEqual({ kind: 'delivered', detail: 'HTTP 202' });
    expect(seen).toHaveLength(2);
    for (const request of seen) {
      expect(request.path).toBe('/hook?from=test');
      expect(request.body).toBe(body);
      expect(request.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'taxprep-webhooks', 'x-partner': 'acme', 'webhook-id': 'msg_attempt1' });
      expect(() => new Webhook(hook.secrets![0]!.secret).verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    }
  });

  it('a 2xx with a large answer is delivered: the body is not read past 64 KB', async () => {
    const url = await receiver((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('x'.repeat(1024 * 1024));
    });
    expect(await attempt(hookFor(url))).toEqual({ kind: 'delivered', detail: 'HTTP 200' });
  });

  it('410 is gone; 429 and 503 wait at least Retry-After (seconds or a date); other codes and redirects are retried', async () => {
    const answers: Array<[number, Record<string, string | string[]>]> = [
      [410, {}],
      [429, { 'retry-after': '7' }],
      [503, { 'retry-after': 'Wed, 25 Nov 2026 10:01:00 GMT' }],
      [500, { 'retry-after': '7' }],
      [302, { location: 'http://127.0.0.1:9/elsewhere' }],
    ];
    let next = 0;
    const url = await receiver((_request, response) => {
      const [status, headers] = answers[next++]!;
      response.writeHead(status, headers).end();
    });
    const hook = hookFor(url);
    const now = new Date('2026-11-25T10:00:00.000Z');
    expect(await attempt(hook, now)).toEqual({ kind: 'gone', detail: 'HTTP 410: the receiver asked for no more deliveries' });
    expect(await attempt(hook, now)).toEqual({ kind: 'retry', detail: 'HTTP 429', notBeforeMs: 7000 });
    expect(await attempt(hook, now)).toEqual({ kind: 'retry', detail: 'HTTP 503', notBeforeMs: 60_000 });
    expect(await attempt(hook, now)).toEqual({ kind: 'retry', detail: 'HTTP 500' });
    expect(await attempt(hook, now)).toEqual({ kind: 'retry', detail: 'HTTP 302' });
  });

  it('a refused connection and a URL that does not parse are retried, naming why', async () => {
    const closed = await receiver(() => undefined);
    const port = new URL(closed).port;
    const server = servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    expect(await attempt(hookFor(`http://127.0.0.1:${port}/hook`))).toEqual({ kind: 'retry', detail: 'connection failed (ECONNREFUSED)' });
    expect(await attempt(hookFor('not a url'))).toEqual({ kind: 'retry', detail: 'connection failed (ERR_INVALID_URL)' });
  });

  it('one deadline timer for all in flight: each attempt times out at its own --timeout, the others go on', async () => {
    const url = await receiver((request, response) => {
      // The first request is never answered; the second is answered after the first timed out.
      if (request.headers['x-partner'] === 'slow') setTimeout(() => response.writeHead(204).end(), 600);
    });
    const order: string[] = [];
    const silent = attempt(hookFor(url, { timeout_ms: 200, headers: [['X-Partner', 'silent']] })).then((outcome) => {
      order.push('silent');
      return outcome;
    });
    const slow = attempt(hookFor(url, { timeout_ms: 5000, headers: [['X-Partner', 'slow']] })).then((outcome) => {
      order.push('slow');
      return outcome;
    });
    expect(await silent).toEqual({ kind: 'retry', detail: 'no answer within 200ms' });
    expect(await slow).toEqual({ kind: 'delivered', detail: 'HTTP 204' });
    expect(order).toEqual(['silent', 'slow']);
  });
});
