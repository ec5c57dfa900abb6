import { pipeline, type Readable, type Transform } from 'node:stream';
import type * as Zlib from 'node:zlib';
import type { Dispatcher } from 'undici';
import { keyRedactor, redactApiKey } from '../contract/apiKeys';
import type { Clock } from '../types';
import { LimitError, type NetworkError } from '../errors';
import { sanitizeLine } from '../output/sanitize';
import { classifyNetworkFailure, networkErrorFrom } from './errors';
import { formatDuration } from '../lib/duration';
import { rateLimitWaitMs, retryDecision, serviceDateMs, type AttemptOutcome, type NetworkFailureKind, type RetryHistory } from './retry';
import { loadConnector, loadEnvHttpProxyAgent, proxyTls } from './undici';
import { tlsFailureError } from './tlsFailure';
import type { Trust } from './trust';
import { VERSION } from './version';
import { formatBytes } from '../output/progress';
import { ENVIRONMENT_VARIABLES } from '../config/settings';
import type { StatusLine } from '../output/statusLine';

type Env = Record<string, string | undefined>;

export interface TransportOptions {
  baseUrl: string;
  apiKey: string | undefined;
  /** Time for one attempt, from sending to the last byte of the answer. */
  timeoutMs: number;
  maxRetries: number;
  /** No retry begins later than this after the first attempt. */
  budgetMs: number;
  verbose: boolean;
  env: Env;
  clock: Clock;
  random: () => number;
  /** One line on stderr: `--verbose` traces. */
  log: (line: string) => void;
  /** Retry notes: on a terminal one line rewritten in place (see src/output/statusLine.ts). */
  retryNotes: StatusLine;
  /** The largest answer read (bodies of requests are not limited by it). */
  maxResponseBytes: number;
  /** The certificate authorities https connections trust. */
  trust: Trust;
  /** How to use another address, for the advice of a TLS failure. */
  changeAddress: string;
}

export type OutgoingBody = { json: unknown } | { stream: () => { body: Readable; headers: Record<string, string> } };

export interface OutgoingRequest {
  method: string;
  url: URL;
  /** Whether the key goes along (it only ever goes to the base URL's origin). */
  authenticated: boolean;
  headers?: Record<string, string>;
  /** A stream body is made afresh for each attempt. */
  body?: OutgoingBody;
  signal?: AbortSignal;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  /** The answer decoded, with the key replaced by its redacted form; empty when `undecodable`. */
  text: string;
  /** Why the answer's content coding could not be read (`it is coded as "zstd", ...`), when it could not. */
  undecodable?: string;
}

/** The content codings taxprep asks for and decodes (node:zlib; RFC 9110 section 8.4.1). */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/** An attempt that got no answer, with how it failed (which decides whether to retry). */
class AttemptFailure extends Error {
  constructor(
    readonly kind: NetworkFailureKind,
    readonly error: NetworkError,
  ) {
    super(error.message);
  }
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The one place that talks HTTP: undici behind a proxy-aware agent (HTTP_PROXY, HTTPS_PROXY,
 * NO_PROXY, read from the context's environment), keep-alive, per-attempt timeouts, retries with
 * the policy of ./retry, and `--verbose` traces with the key redacted. Redirects are never
 * followed, so the key never leaves the base URL's origin.
 */
export function createTransport(options: TransportOptions) {
  const origin = new URL(options.baseUrl).origin;
  // Every text from the service passes here before anything reads it: an echoed key goes no further.
  const redact = keyRedactor(options.apiKey);
  let loaded: Promise<Dispatcher> | undefined;

  const load = () =>
    (loaded ??= (async () => {
      const timeout = Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs);
      const [EnvHttpProxyAgent, connect] = await Promise.all([loadEnvHttpProxyAgent(), loadConnector(options.trust, timeout)]);
      const env = options.env;
      // Given explicitly (empty for none) so that undici does not read process.env behind our back.
      const httpProxy = env.http_proxy ?? env.HTTP_PROXY ?? '';
      const httpsProxy = env.https_proxy ?? env.HTTPS_PROXY ?? '';
      return new EnvHttpProxyAgent({
        httpProxy,
        httpsProxy,
        noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
        connect,
        ...(httpProxy === '' && httpsProxy === '' ? {} : proxyTls(options.trust)),
      });
    })());

  const trace = (line: string) => {
    if (options.verbose) options.log(redact(line));
  };

  async function attempt(request: OutgoingRequest, attemptNumber: number): Promise<HttpResult> {
    const dispatcher = await load();
    const headers: Record<string, string> = {
      'user-agent': `taxprep/${VERSION}`,
      accept: 'application/json',
      'accept-encoding': ACCEPT_ENCODING,
      ...request.headers,
    };
    if (request.authenticated && options.apiKey !== undefined && request.url.origin === origin) {
      headers.authorization = `Bearer ${options.apiKey}`;
    }
    let body: string | Readable | undefined;
    if (request.body !== undefined && 'json' in request.body) {
      body = JSON.stringify(request.body.json);
      headers['content-type'] = 'application/json';
    } else if (request.body !== undefined) {
      const made = request.body.stream();
      body = made.body;
      Object.assign(headers, made.headers);
    }

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('timeout'));
    }, options.timeoutMs);
    const forwardAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', forwardAbort, { once: true });

    trace(`> ${request.method} ${request.url.href}${attemptNumber > 1 ? ` (attempt ${attemptNumber})` : ''}`);
    for (const [name, value] of Object.entries(headers)) trace(`> ${name}: ${redactHeader(name, value)}`);
    // Not `performance.now()`: its first use loads node:perf_hooks (nine modules), for a trace seldom asked for.
    const started = process.hrtime.bigint();
    const elapsedMs = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    try {
      const response = await dispatcher.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: request.method as Dispatcher.HttpMethod,
        headers,
        body,
        signal: controller.signal,
      });
      const responseHeaders = flattenHeaders(response.headers, redact);
      trace(`< ${response.statusCode} (${elapsedMs()} ms)`);
      for (const [name, value] of Object.entries(responseHeaders)) trace(`< ${sanitizeLine(name)}: ${sanitizeLine(value)}`);
      const answer = await readBody(response.body, responseHeaders['content-encoding'], options.maxResponseBytes);
      if (answer.undecodable !== undefined) trace(`< the answer could not be decoded: ${answer.undecodable}`);
      return { status: response.statusCode, headers: responseHeaders, ...answer, text: redact(answer.text) };
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason;
      if (error instanceof LimitError) throw error;
      const kind = timedOut ? 'timeout' : classifyNetworkFailure(error);
      trace(`< no answer after ${elapsedMs()} ms: ${error instanceof Error ? error.message : String(error)}`);
      const tls = timedOut ? undefined : await tlsFailureError(error, request.url, options.trust, options.clock.now(), options.changeAddress);
      // Not retried: a certificate or a port does not change in a second.
      if (tls !== undefined) throw new AttemptFailure('other', tls);
      throw new AttemptFailure(kind, networkErrorFrom(kind, origin, options.timeoutMs, error));
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', forwardAbort);
    }
  }

  /** Sends with retries; answers (any status) are returned, a request that never got one throws. */
  async function send(request: OutgoingRequest): Promise<HttpResult> {
    try {
      return await sendWithRetries(request);
    } finally {
      options.retryNotes.end();
    }
  }

  async function sendWithRetries(request: OutgoingRequest): Promise<HttpResult> {
    const started = options.clock.now().getTime();
    const attempts = options.maxRetries + 1;
    const history: RetryHistory = { backoffMs: 0, refusals: 0 };
    for (let retry = 0; ; retry += 1) {
      let result: HttpResult | undefined;
      let outcome: AttemptOutcome;
      let failure: AttemptFailure | undefined;
      try {
        result = await attempt(request, retry + 1);
        outcome = { kind: 'response', status: result.status, rateLimitWaitMs: rateLimitWait(result, options.clock.now()) };
      } catch (error) {
        if (!(error instanceof AttemptFailure)) throw error;
        failure = error;
        outcome = { kind: 'network', failure: error.kind };
      }
      history.refusals = outcome.kind === 'network' && outcome.failure === 'refused' ? history.refusals + 1 : 0;
      const decision = retry < options.maxRetries ? retryDecision(request.method, outcome, retry, options.random, history) : undefined;
      const elapsed = options.clock.now().getTime() - started;
      if (decision === undefined || elapsed + decision.delayMs > options.budgetMs) {
        if (decision !== undefined) {
          options.retryNotes.show(`${decision.reason}; not retrying: waiting ${formatDuration(decision.delayMs)} would pass the ${formatDuration(options.budgetMs)} retry budget`);
        }
        if (result !== undefined) return result;
        throw failure!.error;
      }
      const when = decision.delayMs < 1 ? 'now' : `in ${formatDuration(decision.delayMs)}`;
      options.retryNotes.show(`${decision.reason}; retrying ${when} (attempt ${retry + 2} of ${attempts})`);
      if (outcome.kind === 'network' || outcome.status !== 429) history.backoffMs = decision.delayMs;
      await options.clock.sleep(decision.delayMs, request.signal);
    }
  }

  return {
    origin,
    send,
    async close() {
      if (loaded !== undefined) await (await loaded).close();
    },
  };
}

export type Transport = ReturnType<typeof createTransport>;

/** How long a 429 answer asks to wait; undefined for other answers or when it does not say. */
export function rateLimitWait(result: HttpResult, now: Date): number | undefined {
  if (result.status !== 429) return undefined;
  let resetAt: unknown;
  try {
    resetAt = (JSON.parse(result.text) as { error?: { details?: { reset_at?: unknown } } }).error?.details?.reset_at;
  } catch {
    resetAt = undefined;
  }
  return rateLimitWaitMs(result.headers['retry-after'], resetAt, now, serviceDateMs(result.headers));
}

let zlib: typeof Zlib | undefined;

/** Decoders by content coding, made for the first bytes of what they decode. */
const DECODERS: Record<string, (first: Buffer) => Transform> = {
  gzip: () => (zlib ??= process.getBuiltinModule('node:zlib')).createGunzip(),
  'x-gzip': () => (zlib ??= process.getBuiltinModule('node:zlib')).createGunzip(),
  // Some servers send raw DEFLATE under "deflate"; the zlib format RFC 9110 names starts with a
  // header whose low four bits are 8, which raw DEFLATE's first byte never has for a valid block.
  deflate: (first) => {
    zlib ??= process.getBuiltinModule('node:zlib');
    return (first[0]! & 0x0f) === 8 ? zlib.createInflate() : zlib.createInflateRaw();
  },
  br: () => (zlib ??= process.getBuiltinModule('node:zlib')).createBrotliDecompress(),
};

/**
 * The answer as text, decoded from its content codings (asked for or not) as it streams in, so
 * that the `maxBytes` cap applies to what is held: a small coded answer that inflates to gigabytes
 * is stopped at the cap like a large plain one. An answer whose coding is unknown or whose bytes do
 * not decode is returned empty with the reason; a failing connection still throws.
 */
async function readBody(body: Readable, contentEncoding: string | undefined, maxBytes: number): Promise<Pick<HttpResult, 'text' | 'undecodable'>> {
  // Listed in the order they were applied: decoded from the last.
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity')
    .reverse();
  // Which failed first: a decoder's error is then passed to the body, and a body's to the decoders.
  // (Listening also lets the body be destroyed unread without an unhandled 'error' event.)
  let failedFirst: 'connection' | 'decoding' | undefined;
  body.on('error', () => (failedFirst ??= 'connection'));
  const unknown = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unknown !== undefined) {
    body.destroy();
    return { text: '', undecodable: `it is coded as "${sanitizeLine(unknown)}", which taxprep cannot decode (it asks for ${ACCEPT_ENCODING})` };
  }
  let stream: Readable = body;
  try {
    for (const coding of codings) {
      const first = await firstChunk(stream);
      if (first === undefined) break;
      const decoder = DECODERS[coding]!(first);
      decoder.once('error', () => (failedFirst ??= 'decoding'));
      stream = pipeline(stream, decoder, () => undefined);
    }
    return { text: await readCapped(stream, maxBytes) };
  } catch (error) {
    stream.destroy();
    body.destroy();
    // The cap destroys the streams itself, which a decoder may report first as its own failure.
    if (error instanceof LimitError || failedFirst !== 'decoding') throw error;
    const reason = error instanceof Error ? error.message : String(error);
    return { text: '', undecodable: `its ${codings.reverse().join(', ')} coding does not decode (${sanitizeLine(reason)})` };
  }
}

/** The stream's first chunk, left in place to be read again; undefined when it ends without one. */
function firstChunk(stream: Readable): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const onReadable = () => {
      stream.off('error', onError);
      const chunk = stream.read() as Buffer | null;
      if (chunk !== null) stream.unshift(chunk);
      resolve(chunk ?? undefined);
    };
    const onError = (error: Error) => {
      stream.off('readable', onReadable);
      reject(error);
    };
    stream.once('readable', onReadable);
    stream.once('error', onError);
  });
}

/**
 * The (decoded) body as text, refusing to hold more than `maxBytes`: a broken or hostile server
 * that never stops sending must not take the memory of the machine (the connection is dropped).
 */
async function readCapped(body: Readable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw new LimitError('RESPONSE_TOO_LARGE', `the service's answer is larger than ${formatBytes(maxBytes)}; taxprep stopped reading it`, {
        hint: `Raise the limit with --max-response-size (or ${ENVIRONMENT_VARIABLES.maxResponseSize}, or max_response_size in the profile) if the answer is meant to be that large; otherwise check the base URL.`,
        details: { max_response_bytes: maxBytes },
      });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function redactHeader(name: string, value: string): string {
  if (name.toLowerCase() !== 'authorization') return value;
  return `Bearer ${redactApiKey(value.replace(/^Bearer\s+/i, ''))}`;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>, redact: (text: string) => string): Record<string, string> {
  // No prototype: a header named `__proto__` is just a header.
  const flat: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[redact(name)] = redact(Array.isArray(value) ? value.join(', ') : value);
  }
  return flat;
}
