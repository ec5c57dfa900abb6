import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/contract';
import { createMockServer, DEFAULT_CONNECTION_LIMITS, type MockServer } from '../../src/mock/server';

let server: MockServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

async function start(connectionLimits = {}): Promise<{ port: number; server: MockServer }> {
  server = await createMockServer({ host: '127.0.0.1', port: 0, rateLimits: [], connectionLimits });
  return { port: Number(new URL(server.appUrl).port), server };
}

/** Opens a raw connection and sends `head` (possibly incomplete); resolves with all the server wrote once it closes. */
function rawRequest(port: number, head: string): { socket: Socket; answer: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.write(head);
  const answer = new Promise<string>((resolve) => {
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('close', () => resolve(received));
    socket.on('error', () => {});
  });
  return { socket, answer };
}

function statusAndError(answer: string): { status: number; error: ErrorBody['error'] } {
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]);
  const body = ErrorBody.parse(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
  return { status, error: body.error };
}

describe('request heads over the limit', () => {
  it('answers a URL too long for the request head with 414 URI_TOO_LONG in the contract body', async () => {
    const { port } = await start();
    const { answer } = rawRequest(port, `GET /v1beta/accounts/${'1'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(statusAndError(await answer)).toEqual({
      status: 414,
      error: { code: 'URI_TOO_LONG', message: expect.stringContaining('URL is too long'), details: { max_bytes: DEFAULT_CONNECTION_LIMITS.maxHeaderBytes } },
    });
  });

  it('answers headers too large with 431 HEADERS_TOO_LARGE in the contract body', async () => {
    const { port } = await start();
    const { answer } = rawRequest(port, `GET /v1beta/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(statusAndError(await answer)).toEqual({
      status: 431,
      error: { code: 'HEADERS_TOO_LARGE', message: expect.stringContaining('headers are too large'), details: { max_bytes: DEFAULT_CONNECTION_LIMITS.maxHeaderBytes } },
    });
  });

  it('still serves a long URL that fits', async () => {
    const { server } = await start();
    const response = await fetch(`${server.baseUrl}/health?pad=${'x'.repeat(6000)}`);
    expect(response.status).toBe(200);
  });
});

describe('slow and idle clients', () => {
  it('keeps /health answering while slow clients hold connections, and drops them with 408', async () => {
    const { port, server } = await start({ headersTimeoutMs: 300 });
    const slow = Array.from({ length: 50 }, () => rawRequest(port, 'GET /v1beta/health HTTP/1.1\r\nHost: x\r\nX-Slow: '));
    for (let i = 0; i < 5; i += 1) {
      const response = await fetch(`${server.baseUrl}/health`);
      expect(response.status).toBe(200);
    }
    const answers = await Promise.all(slow.map((client) => client.answer));
    for (const answer of answers) {
      expect(statusAndError(answer)).toEqual({ status: 408, error: { code: 'REQUEST_TIMEOUT', message: expect.any(String) } });
    }
  });

  it('refuses connections beyond the cap, and serves again once idle ones are closed', async () => {
    const { port, server } = await start({ maxConnections: 10, keepAliveTimeoutMs: 200 });
    // Ten keep-alive connections, each left idle after one request.
    const idle = Array.from({ length: 10 }, () => rawRequest(port, 'GET /v1beta/health HTTP/1.1\r\nHost: x\r\n\r\n'));
    await Promise.all(idle.map((client) => once(client.socket, 'data')));
    const over = rawRequest(port, 'GET /v1beta/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await over.answer).toBe('');
    const closed = await Promise.all(idle.map((client) => client.answer));
    expect(closed.every((answer) => answer.startsWith('HTTP/1.1 200 '))).toBe(true);
    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
  });
});
