import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { createMockServer, type MockServer } from '../../src/mock/server';

/**
 * An upload the mock refuses before reading its whole body (a file type it does not accept, an
 * unknown account, a wrong field before the file): the answer must reach the client, however much
 * of the body it has still to send. The mock answers, then reads and discards the rest before it
 * closes (a lingering close, as nginx does); closing at once resets the connection under a
 * client still writing, which then sees EPIPE or ECONNRESET instead of the answer.
 */

const TRIES = 200;
const BODY_BYTES = 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const BOUNDARY = 'early-refusal-boundary';

let server: MockServer;
beforeAll(async () => {
  server = await createMockServer({ host: '127.0.0.1', port: 0, rateLimits: [] });
});
afterAll(() => server.close());

interface Refusal {
  name: string;
  path: string;
  /** The part's headers: the file part, or a file part under a wrong name. */
  partHead: string;
  status: number;
  code: string;
}

const REFUSALS: Refusal[] = [
  {
    name: 'a file type the service does not accept (415)',
    path: '/accounts/1001/documents',
    partHead: 'Content-Disposition: form-data; name="file"; filename="setup.exe"\r\nContent-Type: application/x-msdownload',
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'an unknown account (404)',
    path: '/accounts/999999/documents',
    partHead: 'Content-Disposition: form-data; name="file"; filename="w2.pdf"\r\nContent-Type: application/pdf',
    status: 404,
    code: 'ACCOUNT_NOT_FOUND',
  },
  {
    name: 'a field error before the file (400)',
    path: '/accounts/1001/documents',
    partHead: 'Content-Disposition: form-data; name="attachment"; filename="w2.pdf"\r\nContent-Type: application/pdf',
    status: 400,
    code: 'VALIDATION_ERROR',
  },
];

/** Reads answers off a raw connection: each one whole, by its Content-Length. */
function answers(socket: Socket): () => Promise<{ status: number; headers: string; body: string }> {
  let buffered = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting?.();
  });
  socket.on('close', () => waiting?.());
  return async () => {
    for (;;) {
      const headEnd = buffered.indexOf('\r\n\r\n');
      if (headEnd >= 0) {
        const headers = buffered.subarray(0, headEnd).toString('latin1');
        const length = Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? 0);
        if (buffered.length >= headEnd + 4 + length) {
          const body = buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
          buffered = buffered.subarray(headEnd + 4 + length);
          return { status: Number(headers.slice(9, 12)), headers, body };
        }
      }
      if (socket.destroyed) return { status: 0, headers: '', body: '(connection closed)' };
      await new Promise<void>((resolve) => (waiting = resolve));
    }
  };
}

/**
 * One exchange on a raw connection, in the order that breaks a mock that closes at once: the
 * upload's head and first 64 KB, the answer read, then the other 960 KB of the body, then a
 * second request on the same connection. Resolves to both answers' statuses, the first one's error
 * code, and every error the connection met (EPIPE, ECONNRESET).
 */
async function exchange(port: number, refusal: Refusal): Promise<{ status: number; code: string; next: number; errors: string[] }> {
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="tax_year"\r\n\r\n2025\r\n--${BOUNDARY}\r\n${refusal.partHead}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const socket = connect(port, '127.0.0.1');
  const errors: string[] = [];
  socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
  // A connection that stops taking the body without closing is a failure too, not a test that hangs.
  const stuck = setTimeout(() => {
    errors.push('not done in 10 s');
    socket.destroy();
  }, 10_000);
  const next = answers(socket);
  const write = (data: string | Buffer) => new Promise<void>((resolve) => (socket.write(data) ? resolve() : socket.once('drain', resolve).once('close', resolve)));
  await write(
    `POST /v1beta${refusal.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_API_KEYS.acme}\r\n` +
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${BODY_BYTES}\r\n\r\n`,
  );
  await write(head);
  let left = BODY_BYTES - head.length - tail.length;
  const chunk = Buffer.alloc(CHUNK_BYTES, 'x');
  await write(chunk);
  left -= CHUNK_BYTES;
  const refused = await next();
  while (left > 0 && !socket.destroyed) {
    const size = Math.min(left, CHUNK_BYTES);
    left -= size;
    await write(size === CHUNK_BYTES ? chunk : chunk.subarray(0, size));
  }
  await write(tail);
  await write('GET /v1beta/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  const following = await next();
  clearTimeout(stuck);
  socket.destroy();
  const code = refused.status === 0 ? '(no answer)' : (JSON.parse(refused.body) as { error: { code: string } }).error.code;
  return { status: refused.status, code, next: following.status, errors };
}

describe('an upload refused before its body is read', () => {
  it(`reaches the client with its answer, and the connection serves the next request, ${TRIES} times out of ${TRIES}: no EPIPE, no reset`, async () => {
    const outcomes = new Map<string, number>();
    const wrong: string[] = [];
    const port = Number(new URL(server.appUrl).port);
    // Stops at the fifth failure: enough to tell what goes wrong, without waiting out every try.
    for (let attempt = 0; attempt < TRIES && wrong.length < 5; attempt += 1) {
      const refusal = REFUSALS[attempt % REFUSALS.length]!;
      const { status, code, next, errors } = await exchange(port, refusal);
      const key = `${refusal.name}: ${status} ${code}, then ${next}${errors.length > 0 ? `, after ${errors.join(', ')}` : ''}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      if (errors.length > 0 || status !== refusal.status || code !== refusal.code || next !== 200) wrong.push(key);
    }
    expect(wrong, JSON.stringify(Object.fromEntries(outcomes))).toEqual([]);
  }, 120_000);
});
