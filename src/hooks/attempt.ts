import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
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

async function post(hook: Hook, url: string, event: EventEntry, body: string, secrets: string[], now: Date, dispatcher: () => Promise<Dispatcher>): Promise<AttemptOutcome> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers: Record<string, string> = {
    ...Object.fromEntries(hook.headers),
    'content-type': 'application/json',
    'user-agent': 'taxprep-webhooks',
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, event.id, timestamp, body),
  };
  // A timer of our own, not AbortSignal.timeout: that one is unref'd, as are undici's, and a
  // process waiting only on an unanswered request would end (exit 13) instead of timing it out.
  // It aborts through an EventEmitter, which undici takes as a signal too: an AbortController
  // (an EventTarget, its listener map and options) allocated more per attempt than the rest of it.
  const timeout = new EventEmitter();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    timeout.emit('abort');
  }, hook.timeout_ms);
  try {
    const target = new URL(url);
    const response = await (await dispatcher()).request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: 'POST',
      headers,
      body,
      signal: timeout,
      headersTimeout: hook.timeout_ms,
      bodyTimeout: hook.timeout_ms,
    });
    // The answer's body means nothing to us; read it off so that the connection is reused.
    await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { kind: 'delivered', detail: `HTTP ${status}` };
    if (status === 410) return { kind: 'gone', detail: 'HTTP 410: the receiver asked for no more deliveries' };
    const retryAfter = response.headers['retry-after'];
    if ((status === 429 || status === 503) && typeof retryAfter === 'string') {
      return { kind: 'retry', detail: `HTTP ${status}`, notBeforeMs: rateLimitWaitMs(retryAfter, undefined, now) };
    }
    return { kind: 'retry', detail: `HTTP ${status}` };
  } catch (error) {
    const name = (error as Error).name;
    if (timedOut || name === 'TimeoutError' || name === 'AbortError' || /Timeout/.test(name)) return { kind: 'retry', detail: `no answer within ${formatDuration(hook.timeout_ms)}` };
    const code = (error as NodeJS.ErrnoException).code;
    return { kind: 'retry', detail: code === undefined ? (error as Error).message : `connection failed (${code})` };
  } finally {
    clearTimeout(timer);
  }
}

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
