import { spawn } from 'node:child_process';
import type { Dispatcher } from 'undici';
import { TLS_CAUSE_WORDS, tlsCauseOf } from '../api/tlsFailure';
import { rateLimitWaitMs } from '../api/retry';
import { formatDuration } from '../lib/duration';
import type { EventEntry } from '../batch/ledgers/outbox';
import { sentenceOf } from './events';
import { signatureHeader } from './sign';
import type { Hook } from './store';

/** How one attempt ended. `gone`: the receiver answered 410, and the hook is disabled. */
export interface AttemptOutcome {
  kind: 'delivered' | 'retry' | 'gone';
  detail: string;
  /** At least this long before the next attempt (429 and 503 with `Retry-After`). */
  notBeforeMs?: number;
}

/** What a hook receives: the signed body, or for `--format text` a chat message. */
export function bodyFor(hook: Hook, event: EventEntry, standardBody: string): string {
  if (hook.format === 'standard') return standardBody;
  return JSON.stringify({ text: sentenceOf(event.event, (JSON.parse(standardBody) as { data: Record<string, unknown> }).data) });
}

/** Sends one delivery of `event` (whose Standard Webhooks body is `standardBody`): POST with the Standard Webhooks headers, or the command with the body on stdin. */
export function attemptDelivery(hook: Hook, event: EventEntry, standardBody: string, secrets: string[], now: Date, dispatcher: () => Promise<Dispatcher>): Promise<AttemptOutcome> {
  const body = bodyFor(hook, event, standardBody);
  return hook.exec !== undefined ? runExec(hook, hook.exec, event, body) : post(hook, hook.url!, event, body, secrets, now, dispatcher);
}

/** What every attempt to one HTTP hook shares, made once per hook (a sweep reads the hooks afresh, so once per sweep). */
interface HttpTarget {
  origin: string;
  path: string;
  /** The hook's own headers, then taxprep's fixed ones, as name, value, name, value: the webhook-* ones are added per attempt. */
  headers: string[];
}

const targets = new WeakMap<Hook, HttpTarget>();
const PER_ATTEMPT_HEADERS = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature']);

function httpTargetOf(hook: Hook, url: string): HttpTarget {
  let target = targets.get(hook);
  if (target === undefined) {
    const parsed = new URL(url);
    // An object first, as one attempt's headers were: a name given twice keeps the last value.
    const fixed: Record<string, string> = { ...Object.fromEntries(hook.headers), 'content-type': 'application/json', 'user-agent': 'taxprep-webhooks' };
    const headers = Object.entries(fixed)
      .filter(([name]) => !PER_ATTEMPT_HEADERS.has(name))
      .flat();
    targets.set(hook, (target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}`, headers }));
  }
  return target;
}

/** The most of an answer's body read: it means nothing to us, and past this the connection is dropped rather than read on. */
const ANSWER_BODY_LIMIT = 64 * 1024;

function post(hook: Hook, url: string, event: EventEntry, body: string, secrets: string[], now: Date, dispatcher: () => Promise<Dispatcher>): Promise<AttemptOutcome> {
  let target: HttpTarget;
  try {
    target = httpTargetOf(hook, url);
  } catch (error) {
    // A hooks file edited by hand to hold no URL: retried by the schedule like any failure to connect.
    return Promise.resolve(outcomeOfError(error as Error, hook.timeout_ms, false));
  }
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers = [...target.headers, 'webhook-id', event.id, 'webhook-timestamp', String(timestamp), 'webhook-signature', signatureHeader(secrets, event.id, timestamp, body)];
  return dispatcher().then(
    (agent) =>
      new Promise<AttemptOutcome>((resolve) => {
        const attempt = new HttpAttempt(hook.timeout_ms, now, resolve);
        deadlines.add(attempt);
        // undici's own handler API, not `request`: its answer as a stream (with its listeners,
        // ticks and parsed headers) doubled the work of an attempt, for a body we throw away.
        agent.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers, body, headersTimeout: hook.timeout_ms, bodyTimeout: hook.timeout_ms }, attempt);
      }),
    (error: unknown) => outcomeOfError(error as Error, hook.timeout_ms, false),
  );
}

/**
 * One POST as undici reports it: the status of the answer is the outcome (a body cut short after
 * it changes nothing), an error before it is retried. Ends when undici is done with it, or when
 * its deadline passes (see `Deadlines`).
 */
class HttpAttempt implements Dispatcher.DispatchHandler {
  readonly deadlineMs: number;
  private abort: ((error?: Error) => void) | undefined;
  private timedOut = false;
  private status = 0;
  private retryAfter: string | undefined;
  private bodyBytes = 0;
  private done = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: Date,
    private readonly resolve: (outcome: AttemptOutcome) => void,
  ) {
    this.deadlineMs = performance.now() + timeoutMs;
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.timedOut) abort(new AttemptTimeoutError());
    else this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // 1xx answers are informational: the final one follows.
    if (statusCode < 200) return true;
    this.status = statusCode;
    if (statusCode === 429 || statusCode === 503) this.retryAfter = singleHeader(rawHeaders, 'retry-after');
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.bodyBytes += chunk.length;
    if (this.bodyBytes > ANSWER_BODY_LIMIT) {
      this.finish();
      this.abort?.(new Error('answer body too large'));
    }
    return true;
  }

  onComplete(): void {
    this.finish();
  }

  onError(error: Error): void {
    if (this.status !== 0) this.finish();
    else this.finish(outcomeOfError(error, this.timeoutMs, this.timedOut));
  }

  /** Its deadline passed: abort it now, or as soon as undici starts sending it. */
  expire(): void {
    this.timedOut = true;
    this.abort?.(new AttemptTimeoutError());
  }

  private finish(failed?: AttemptOutcome): void {
    if (this.done) return;
    this.done = true;
    deadlines.delete(this);
    this.resolve(failed ?? outcomeOfStatus(this.status, this.retryAfter, this.now));
  }
}

class AttemptTimeoutError extends Error {
  override name = 'TimeoutError';
}

function outcomeOfStatus(status: number, retryAfter: string | undefined, now: Date): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', detail: `HTTP ${status}` };
  if (status === 410) return { kind: 'gone', detail: 'HTTP 410: the receiver asked for no more deliveries' };
  if ((status === 429 || status === 503) && retryAfter !== undefined) return { kind: 'retry', detail: `HTTP ${status}`, notBeforeMs: rateLimitWaitMs(retryAfter, undefined, now) };
  return { kind: 'retry', detail: `HTTP ${status}` };
}

function outcomeOfError(error: Error, timeoutMs: number, timedOut: boolean): AttemptOutcome {
  const name = error.name;
  if (timedOut || name === 'TimeoutError' || name === 'AbortError' || /Timeout/.test(name)) return { kind: 'retry', detail: `no answer within ${formatDuration(timeoutMs)}` };
  const tls = tlsCauseOf(error);
  if (tls !== undefined) return { kind: 'retry', detail: `${TLS_CAUSE_WORDS[tls.cause]} (${tls.code})` };
  const code = (error as NodeJS.ErrnoException).code;
  return { kind: 'retry', detail: code === undefined ? error.message : `connection failed (${code})` };
}

/** The value of a header given once in undici's raw headers (name, value, ...); undefined when absent or repeated. */
function singleHeader(rawHeaders: Buffer[], name: string): string | undefined {
  let value: string | undefined;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]!.length !== name.length || rawHeaders[index]!.toString('latin1').toLowerCase() !== name) continue;
    if (value !== undefined) return undefined;
    value = rawHeaders[index + 1]!.toString('latin1');
  }
  return value;
}

/**
 * One timer for every attempt in flight, not one each: armed for the earliest deadline, and when
 * it fires, it ends what is past due and is armed for the next. It keeps the process alive, as
 * undici's own timers (unref'd) do not: a process waiting only on an unanswered request would end
 * (exit 13) instead of timing it out.
 */
class Deadlines {
  private readonly running = new Set<HttpAttempt>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;

  add(attempt: HttpAttempt): void {
    this.running.add(attempt);
    if (attempt.deadlineMs < this.armedFor) this.arm(attempt.deadlineMs);
  }

  delete(attempt: HttpAttempt): void {
    this.running.delete(attempt);
    if (this.running.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  private arm(atMs: number): void {
    clearTimeout(this.timer);
    this.armedFor = atMs;
    this.timer = setTimeout(this.fire, Math.max(0, atMs - performance.now()));
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const attempt of this.running) {
      if (attempt.deadlineMs <= now) attempt.expire();
      else next = Math.min(next, attempt.deadlineMs);
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  };
}

const deadlines = new Deadlines();

function runExec(hook: Hook, command: string, event: EventEntry, body: string): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      env: { ...process.env, TAXPREP_WEBHOOK_ID: event.id, TAXPREP_EVENT_TYPE: event.event },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), hook.timeout_ms);
    let timedOut = false;
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ kind: 'retry', detail: `could not run: ${error.message}` });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      timedOut = signal === 'SIGKILL';
      if (code === 0) resolve({ kind: 'delivered', detail: 'exit 0' });
      else resolve({ kind: 'retry', detail: timedOut ? `no exit within ${formatDuration(hook.timeout_ms)}` : signal !== null ? `ended by ${signal}` : `exit ${code}` });
    });
    // A command that does not read its stdin closes it: that is not a failure of the delivery.
    child.stdin.on('error', () => undefined);
    child.stdin.end(body);
  });
}
