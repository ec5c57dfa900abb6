import { bodySnippet } from '../../api/errors';
import { checkKey, type KeyCheckOutcome } from '../../api/keyCheck';
import { ApiError, CliError, EXIT, NetworkError } from '../../errors';
import { formatDuration } from '../../lib/duration';
import type { Clock } from '../../types';
import { readRateLimit } from '../../batch/pacer';
import type { CountedApi } from './budget';
import { fail, ok, skip, warn, type Check } from './checks';
import { proxyInEffect } from './proxy';

type Env = Record<string, string | undefined>;

/** Above this, link expiry and renewal windows computed here are off by more than a person would accept. */
export const CLOCK_SKEW_WARNING_MS = 30_000;

/** What the health request learnt, for the checks that follow it. */
export interface HealthFacts {
  checks: Check[];
  /** The base URL answers as the API does: the other service checks may run. */
  isApi: boolean;
  /** The service's `Date` header and this machine's time when it arrived (mid-request). */
  date?: { serviceMs: number; localMs: number };
}

/** GET /health without the key: reachable, TLS, redirects, does it look like the API, and the service's clock. */
export async function healthChecks(api: CountedApi, baseUrl: string, env: Env, clock: Clock): Promise<HealthFacts> {
  const https = new URL(baseUrl).protocol === 'https:';
  const before = clock.now().getTime();
  let answer: Awaited<ReturnType<CountedApi['raw']>>;
  try {
    answer = await api.raw('GET', '/health', { anonymous: true });
  } catch (error) {
    if (!(error instanceof NetworkError)) throw error;
    if (error.code === 'TLS_ERROR') return { checks: [fail('base_url', 'TLS', error.message, error.hint ?? 'Check the base URL.', EXIT.NETWORK)], isApi: false };
    const proxy = proxyInEffect(baseUrl, env);
    const through = proxy.proxy === undefined ? '' : ` Requests go through the proxy ${proxy.proxy} (${proxy.because}): check it, or list the host in NO_PROXY.`;
    return { checks: [fail('base_url', 'reachable', `${error.message}`, `${error.hint ?? 'Check the base URL.'}${through}`, EXIT.NETWORK)], isApi: false };
  }
  const after = clock.now().getTime();
  const checks: Check[] = [ok('base_url', 'reachable', `GET /health answered HTTP ${answer.status} in ${formatDuration(after - before)}`)];
  if (https) checks.push(ok('base_url', 'TLS', 'the certificate is valid for the host'));
  const dateMs = answer.headers.date === undefined ? NaN : Date.parse(answer.headers.date);
  const date = Number.isNaN(dateMs) ? undefined : { serviceMs: dateMs, localMs: Math.round((before + after) / 2) };
  if (answer.status >= 300 && answer.status < 400) {
    const location = answer.headers.location;
    const target = location?.replace(/\/health\/?$/, '');
    checks.push(
      fail(
        'base_url',
        'redirects',
        `GET /health answered HTTP ${answer.status}${location ? ` to ${bodySnippet(location)}` : ''}; taxprep never follows a redirect with the key`,
        target && target !== location ? `Use the address it points to: taxprep profiles add <name> --base-url ${bodySnippet(target)}` : 'Use the address the service answers at without a redirect (ask the service operator).',
        EXIT.SERVER,
      ),
    );
    return { checks, isApi: false, date };
  }
  checks.push(ok('base_url', 'redirects', 'none'));
  const status = (answer.json as { status?: unknown } | undefined)?.status;
  if (answer.status >= 200 && answer.status < 300 && typeof status === 'string') {
    if (status === 'ok') checks.push(ok('base_url', 'looks like the API', 'GET /health says "ok"'));
    else checks.push(fail('base_url', 'looks like the API', `GET /health says "${bodySnippet(status)}", not "ok"`, 'The service reports a problem of its own: try again later, or ask the service operator.', EXIT.SERVER));
    return { checks, isApi: status === 'ok', date };
  }
  if (answer.status >= 500) {
    checks.push(fail('base_url', 'looks like the API', `GET /health answered HTTP ${answer.status}`, 'The service (or a gateway before it) failed: try again later.', EXIT.SERVER));
    return { checks, isApi: false, date };
  }
  const snippet = bodySnippet(answer.text);
  checks.push(
    fail(
      'base_url',
      'looks like the API',
      `GET /health answered HTTP ${answer.status}${snippet ? ` "${snippet}"` : ''}, not the service's health record`,
      "The base URL does not point at the API: it should be the service's address including /v1beta (taxprep profiles add <name> --base-url https://.../v1beta).",
      EXIT.NOT_THE_API,
    ),
  );
  return { checks, isApi: false, date };
}

/** The key against the service: accepted, refused or expired; the page read is the deliverables baseline. */
export async function keyChecks(api: CountedApi): Promise<{ checks: Check[]; outcome: KeyCheckOutcome }> {
  const outcome = await checkKey(api, 100);
  const { check, error } = outcome;
  const answer = check.status === null ? 'no answer' : `HTTP ${check.status}${check.code ? ` ${check.code}` : ''}`;
  if (check.result === 'accepted') return { checks: [ok('key', 'accepted', `${check.request}: ${answer}`)], outcome };
  if (check.code === 'EXPIRED_API_KEY') {
    return { checks: [fail('key', 'accepted', `expired (${check.request}: ${answer})`, 'Ask the service operator for a new key, then store it: taxprep profiles add <name>', EXIT.AUTH)], outcome };
  }
  return { checks: [fail('key', 'accepted', `${check.result === 'refused' ? 'refused' : 'not confirmed'} (${check.request}: ${answer}): ${error?.message ?? ''}`, error?.hint ?? 'Check the key and the base URL.', error?.exitCode ?? EXIT.SERVER)], outcome };
}

type Access = 'yes' | 'no' | { unknown: string };

/**
 * Whether one read went past the permission check: an answer, or an error about the record
 * (unknown, another partner's) rather than about the key.
 */
async function access(read: () => Promise<unknown>): Promise<Access> {
  try {
    await read();
    return 'yes';
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    if (error.code === 'INSUFFICIENT_PERMISSIONS') return 'no';
    if (error instanceof ApiError && (error.status === 404 || error.code === 'ACCESS_DENIED')) return 'yes';
    return { unknown: error instanceof ApiError ? `HTTP ${error.status} ${error.code}` : error.code };
  }
}

export interface PermissionFacts {
  checks: Check[];
  /** The account's projects, unfiltered, when they could be read (the projects baseline). */
  projects?: { accountId: string; items: Array<Record<string, unknown>> };
}

/** Account to read with: the one with most deliverables on the first page (more data for the names), else 1. */
export function accountToRead(deliverables: ReadonlyArray<Record<string, unknown>> | undefined): string {
  const counts = new Map<string, number>();
  for (const item of deliverables ?? []) {
    const account = item?.account_id;
    if (account !== undefined && account !== null) counts.set(String(account), (counts.get(String(account)) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '1';
}

/** One read per resource kind; writes are never tried. */
export async function permissionChecks(api: CountedApi, outcome: KeyCheckOutcome): Promise<PermissionFacts> {
  const deliverables = outcome.page?.data.deliverables as Array<Record<string, unknown>> | undefined;
  const accountId = accountToRead(deliverables);
  const id = Number(accountId);
  let projects: PermissionFacts['projects'];
  const kinds: Array<[string, Access]> = [
    ['accounts', await access(() => api.call('getAccount', { params: { account_id: id } }))],
    ['documents', await access(() => api.call('listDocuments', { params: { account_id: id }, query: { limit: 1 } }))],
    [
      'projects',
      await access(async () => {
        const answer = await api.call('listProjects', { params: { account_id: id } });
        projects = { accountId, items: answer.data.projects as Array<Record<string, unknown>> };
      }),
    ],
    ['deliverables', outcome.page !== undefined ? 'yes' : outcome.check.code === 'INSUFFICIENT_PERMISSIONS' ? 'no' : { unknown: outcome.check.code ?? 'no answer' }],
  ];
  const granted = kinds.filter(([, result]) => result === 'yes').map(([kind]) => kind);
  const missing = kinds.filter(([, result]) => result === 'no').map(([kind]) => `${kind}:read`);
  const unknown = kinds.filter(([, result]) => typeof result === 'object').map(([kind, result]) => `${kind} (${(result as { unknown: string }).unknown})`);
  const read = `one read each, with account ${accountId}; writes are never tried`;
  const checks: Check[] = [];
  if (missing.length === 0 && unknown.length === 0) checks.push(ok('key', 'read permissions', `${granted.join(', ')} (${read})`));
  else if (missing.length > 0) {
    checks.push(warn('key', 'read permissions', `lacks ${missing.join(', ')}${granted.length > 0 ? `; has ${granted.join(', ')}` : ''} (${read})`, `Commands that read those exit 3. Ask the service operator to grant ${missing.join(', ')}, or use a profile whose key has them (--profile).`));
  }
  if (unknown.length > 0) checks.push(warn('key', 'read permissions', `could not tell for ${unknown.join(', ')}`, 'Run doctor again; if it persists, try the command itself with --verbose.'));
  return { checks, ...(projects === undefined ? {} : { projects }) };
}

/** This machine's clock against the service's `Date` header (whole seconds, so a second of slack). */
export function clockCheck(date: HealthFacts['date']): Check {
  if (date === undefined) return warn('clock', 'skew', 'the service sent no Date header to compare with', 'Nothing to do unless link expiry times look wrong.');
  const skewMs = date.serviceMs - date.localMs;
  const size = Math.abs(skewMs);
  const words = size < 1500 ? 'in step with the service (within a second)' : `${formatDuration(size)} ${skewMs > 0 ? 'behind' : 'ahead of'} the service`;
  if (size <= CLOCK_SKEW_WARNING_MS) return ok('clock', 'skew', `this machine's clock is ${words}`);
  return warn(
    'clock',
    'skew',
    `this machine's clock is ${words} (more than ${formatDuration(CLOCK_SKEW_WARNING_MS)}): link expiry times and the renewal window are computed here`,
    'Set the clock by network time (e.g. `timedatectl set-ntp true`, or your system settings). Against `taxprep serve --mock` after `/_mock/clock` advanced it, this is expected (docs/mock.md).',
  );
}

/** The key's quota as the latest answer states it. */
export function quotaCheck(headers: Record<string, string> | undefined, date: HealthFacts['date'], now: number, used: number): Check {
  if (headers === undefined) return skip('quota', 'rate limit', 'no answer to a request with the key to read it from');
  const serviceNow = date === undefined ? now : now + (date.serviceMs - date.localMs);
  const reading = readRateLimit(headers, serviceNow);
  if (reading === undefined) return ok('quota', 'rate limit', 'the service sends no X-RateLimit-* headers; taxprep waits when a 429 says so (the contract: 100 per minute, 10,000 per day)');
  const reset = formatDuration(Math.max(0, reading.resetMs - serviceNow));
  const left = `${reading.remaining} of ${reading.limit} left, the window resets in ${reset} (doctor used ${used})`;
  if (reading.remaining > 0) return ok('quota', 'rate limit', left);
  return warn('quota', 'rate limit', left, `Requests now wait for the reset, or exit 6 after their retries; wait ${reset}.`);
}
