import { createReadStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import type { z } from 'zod';
import { endpointPath, endpoints, type EndpointName } from '../contract/endpoints';
import { describeFieldErrors, fieldErrors } from '../contract/rules';
import type { Clock, GlobalOptions, ResolvedSettings } from '../types';
import { ApiError, LimitError, ProtocolError, UsageError } from '../errors';
import { CONFIGURABLE_QUERY_PARAMETERS, describeKeySource, ENVIRONMENT_VARIABLES } from '../config/settings';
import { sanitizeLine } from '../output/sanitize';
import type { ApiClient, ApiResponse, CallInput } from './types';
import { apiErrorFrom, CHANGE_SETTINGS, notTheApi, type ErrorContext } from './errors';
import type { Trust } from './trust';
import { LIST_KEYS, misfit, PARSE_WITHOUT_JIT, tolerantReader, type TolerantResponseOf } from './tolerant';
import { createTransport, rateLimitWait, type HttpResult, type OutgoingRequest, type Transport } from './http';
import type { StatusLine } from '../output/statusLine';
import { DEFAULT_MAX_RETRIES, RETRY_BUDGET_MS } from './retry';
import type { LearnedService, LearnedStore } from '../config/learned';
import { ruleFromRefusal } from './uploadRules';
import { formatBytes } from '../output/progress';
import { findOffsetName } from './queryNames';

export const DEFAULT_TIMEOUT_MS = 30_000;
/** `pages()` asks for the contract's largest page unless told otherwise: fewest requests. */
const DEFAULT_PAGE_SIZE = 100;
/** `--all` stops with LIMIT (exit 12) beyond this many pages: 100,000 items at the largest page size. */
export const DEFAULT_MAX_PAGES = 1000;

/** The lists with filters whose names the contract does not show, as the settings name them (`projects.type`). */
const LIST_OF_ENDPOINT: Partial<Record<EndpointName, string>> = { listProjects: 'projects', listDeliverables: 'deliverables' };

/** The settings key of a filter whose name may be configured (`projects.type`), or undefined. */
function configurableFilter(name: EndpointName, key: string): string | undefined {
  const setting = `${LIST_OF_ENDPOINT[name]}.${key}`;
  return Object.hasOwn(CONFIGURABLE_QUERY_PARAMETERS, setting) ? setting : undefined;
}
/** Whether a call's query has a name the settings may rename (only those calls read what was learned). */
function namesConfigurableFilters(name: EndpointName): boolean {
  return Object.keys(CONFIGURABLE_QUERY_PARAMETERS).some((setting) => setting.startsWith(`${LIST_OF_ENDPOINT[name]}.`));
}
/** Query keys that page rather than filter. */
const PAGING_KEYS = new Set(['limit', 'offset']);

export interface ApiClientOptions {
  baseUrl: string;
  apiKey: string | undefined;
  settings: ResolvedSettings;
  globals: Pick<GlobalOptions, 'timeoutMs' | 'maxRetries' | 'retry' | 'verbose'>;
  env: Record<string, string | undefined>;
  clock: Clock;
  random: () => number;
  log: (line: string) => void;
  /** Where retry notes go: see src/output/statusLine.ts. */
  retryNotes: StatusLine;
  /**
   * What was learned of this profile and base URL, or of the team's namespace in a shared store
   * (upload rules, the offset's name); read and added to. Opened only by a call that needs it.
   */
  learned?: () => Promise<LearnedStore>;
  /** The certificate authorities https connections trust. */
  trust: Trust;
}

/** A list answer as read: the page to show, and what paging needs of what was sent. */
interface ListRead<N extends EndpointName> {
  page: ApiResponse<TolerantResponseOf<N>>;
  /** Items the service sent, before dropping those that do not match a filter. */
  sent: number;
  /** Their ids in order (as JSON), to notice a page that repeats. */
  ids: string;
  /** The items as sent, before any was dropped. */
  sentItems: unknown[];
}

export function createApiClient(options: ApiClientOptions): { api: ApiClient; close(): Promise<void> } {
  const timeoutMs = options.globals.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const transport = createTransport({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    timeoutMs,
    maxRetries: options.globals.retry ? (options.globals.maxRetries ?? DEFAULT_MAX_RETRIES) : 0,
    budgetMs: RETRY_BUDGET_MS,
    verbose: options.globals.verbose,
    env: options.env,
    clock: options.clock,
    random: options.random,
    log: options.log,
    retryNotes: options.retryNotes,
    maxResponseBytes: options.settings.maxResponseBytes,
    trust: options.trust,
    changeAddress: CHANGE_SETTINGS,
  });
  const errorContext: ErrorContext = { keySource: describeKeySource(options.settings), baseUrl: options.baseUrl };
  const base = `${options.baseUrl}/`;
  const warned = new Set<string>();
  const warn = (line: string) => options.log(`warning: ${sanitizeLine(line)}`);
  const warnOnce = (topic: string, line: string) => {
    if (warned.has(topic)) return;
    warned.add(topic);
    warn(line);
  };

  /**
   * A query parameter's name as sent: the contract's, unless the settings rename the filter; a
   * name not renamed by hand is the one learned from the service (`--all` finding the offset's).
   */
  function parameterName(name: EndpointName, key: string): string {
    const setting = configurableFilter(name, key);
    if (setting === undefined) return key;
    const configured = options.settings.queryParameters[setting] ?? key;
    if (configured !== CONFIGURABLE_QUERY_PARAMETERS[setting as keyof typeof CONFIGURABLE_QUERY_PARAMETERS]) return configured;
    return known.query_parameters?.[setting]?.value ?? configured;
  }

  /**
   * What was learned, as far as this client needs it: read before the first request that names a
   * filter the settings may rename. A store that cannot be read (a shared store down) does not stop
   * a read: the names set by hand or the contract's are sent, and what guards against a service that
   * names them differently still holds (rows of another filter value dropped with a warning, a
   * repeated page found by `--all`).
   */
  let known: LearnedService = {};
  let knownRead = false;
  async function readKnown(name: EndpointName): Promise<void> {
    if (knownRead || options.learned === undefined || !namesConfigurableFilters(name)) return;
    knownRead = true;
    try {
      known = await (await options.learned()).read();
    } catch (error) {
      warn(`the query parameter names learned from the service could not be read (${error instanceof Error ? error.message : String(error)}); this run sends the names set by hand or the contract's`);
    }
  }

  /** Adds to what was learned; a store that cannot take it (a shared store down) costs only the memory of it: `undefined` and why. */
  async function learn(change: (current: LearnedService) => LearnedService): Promise<{ store: LearnedStore } | { problem: string }> {
    try {
      const store = await options.learned!();
      known = await store.update(change);
      knownRead = true;
      return { store };
    } catch (error) {
      return { problem: error instanceof Error ? sanitizeLine(error.message) : String(error) };
    }
  }

  /**
   * Remembers the rule an upload refusal names (its details give the limit or the types) for this
   * profile and base URL, and says so after the service's message.
   */
  async function learnFromUploadRefusal(result: HttpResult): Promise<string | undefined> {
    if (options.learned === undefined || ![400, 413, 415].includes(result.status)) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(result.text);
    } catch {
      return undefined;
    }
    const rule = ruleFromRefusal(result.status, body);
    if (rule.maxBytes === undefined && rule.types === undefined) return undefined;
    const code = (body as { error?: { code?: unknown } }).error?.code;
    const learned = { learned_at: options.clock.now().toISOString(), from: `HTTP ${result.status}${typeof code === 'string' ? ` ${sanitizeLine(code)}` : ''}` };
    const kept = await learn((current) => ({
      ...current,
      ...(rule.maxBytes === undefined ? {} : { upload_max_bytes: { value: rule.maxBytes, ...learned } }),
      ...(rule.types === undefined ? {} : { upload_types: { value: rule.types, ...learned } }),
    }));
    const said = [
      ...(rule.maxBytes === undefined ? [] : [`an upload limit of ${formatBytes(rule.maxBytes)}`]),
      ...(rule.types === undefined ? [] : [`the file types ${rule.types.join(', ')}`]),
    ].join(' and ');
    if ('problem' in kept) return `The service named ${said}; taxprep could not remember it (${kept.problem}).`;
    return `The service named ${said}: taxprep remembers it for ${kept.store.whose}, refuses a file beyond it before sending, and \`taxprep doctor\` shows it (${kept.store.where}).`;
  }

  async function send<N extends EndpointName>(name: N, input: CallInput<N>): Promise<{ result: HttpResult; query: Record<string, unknown> }> {
    await readKnown(name);
    const spec = endpoints[name];
    const params = 'params' in spec ? checkInput(spec.params, input.params, 'path') : {};
    const query = 'query' in spec ? (checkInput(spec.query, input.query ?? {}, 'query') as Record<string, unknown>) : {};
    const url = new URL(endpointPath(spec.path, params as Record<string, string | number>).slice(1), base);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(parameterName(name, key), String(value));
    }
    const request: OutgoingRequest = { method: spec.method, url, authenticated: 'permission' in spec, signal: input.signal };
    if ('body' in spec && !('multipart' in spec)) request.body = { json: checkInput(spec.body, input.body ?? {}, 'body') };
    return { result: await transport.send(request), query };
  }

  async function call<N extends EndpointName>(name: N, input: CallInput<N> = {}): Promise<ApiResponse<TolerantResponseOf<N>>> {
    if (name in LIST_KEYS) return (await readList(name, input)).page;
    const { result } = await send(name, input);
    return readAnswer(name, result);
  }

  /** The answer's JSON; `emptyIsAnswer`: an empty 2xx body reads as `{}` (a write acknowledged without a body). */
  function jsonOf(result: HttpResult, emptyIsAnswer = false): unknown {
    if (result.undecodable !== undefined) throw undecodableAnswer(result, result.undecodable);
    if (result.status < 200 || result.status > 299) {
      throw apiErrorFrom(result.status, result.text, errorContext, rateLimitWait(result, options.clock.now()));
    }
    if (emptyIsAnswer && result.text.trim() === '') return {};
    try {
      return JSON.parse(result.text);
    } catch {
      throw notTheApi(result.status, result.text, options.baseUrl);
    }
  }

  function contractMismatch(problems: string): ProtocolError {
    return new ProtocolError(`the service's answer does not match the contract: ${sanitizeLine(problems)}`, {
      hint: 'Run with --json to see the document as sent, and report it.',
    });
  }

  /**
   * One resource. An answer to a write that does not fit is a warning: the service acknowledged
   * the write, so it is reported done and shown as sent, never as a failure that invites a re-run.
   */
  function readAnswer<N extends EndpointName>(name: N, result: HttpResult): ApiResponse<TolerantResponseOf<N>> {
    const reader = tolerantReader(name);
    if (reader.write && acknowledgedUnread(result)) return { status: result.status, data: {} as TolerantResponseOf<N>, json: {}, headers: result.headers };
    const json = jsonOf(result, reader.write);
    const fit = misfit(reader.answer, json);
    if ('data' in fit) {
      const id = (fit.data as { id?: unknown }).id;
      if (reader.write && reader.hasId && (id === undefined || id === null)) {
        warn(`the service accepted the request (HTTP ${result.status}) but its answer carries no id`);
      }
      return { status: result.status, data: fit.data as TolerantResponseOf<N>, json, headers: result.headers };
    }
    if (!reader.write) throw contractMismatch(fit.problems);
    warn(`the service accepted the request (HTTP ${result.status}) but its answer does not fit the contract (${fit.problems}); it is shown as sent`);
    const data = typeof json === 'object' && json !== null && !Array.isArray(json) ? json : {};
    return { status: result.status, data: data as TolerantResponseOf<N>, json, headers: result.headers };
  }

  /**
   * A list page. Items that do not fit the contract are kept as sent, with a warning naming the
   * item and field. Items that do not match a filter the user gave are dropped, with one warning
   * naming the parameter (a service that names the filter differently ignores ours).
   */
  async function readList<N extends EndpointName>(name: N, input: CallInput<N>): Promise<ListRead<N>> {
    const { result, query } = await send(name, input);
    const json = jsonOf(result);
    const reader = tolerantReader(name);
    const list = reader.list!;
    const envelope = misfit(reader.answer, json);
    if (!('data' in envelope)) throw contractMismatch(envelope.problems);
    const sentItems = (envelope.data as Record<string, unknown[]>)[list.key]!;
    const items = sentItems.map((item, index) => {
      const fit = misfit(list.item, item);
      if ('data' in fit) return fit.data;
      warn(`${list.key} item ${index + 1}${describeId(item)} does not fit the contract (${fit.problems}); it is shown as sent`);
      return item;
    });
    const filters = Object.entries(query).filter(([key, value]) => value !== undefined && !PAGING_KEYS.has(key));
    const kept = items.filter((item) => {
      for (const [key, value] of filters) {
        const field = (item as Record<string, unknown> | null)?.[key];
        if (field !== undefined && field !== null && String(field) !== String(value)) {
          const parameter = parameterName(name, key);
          const setting = configurableFilter(name, key);
          warnOnce(
            `filter:${key}`,
            `the service sent ${list.key} whose ${key} is not ${String(value)}, as if it ignored the query parameter "${parameter}"; ` +
              `taxprep dropped them${setting === undefined ? '' : ` (if the service names this filter differently, set "${setting}" in ${ENVIRONMENT_VARIABLES.queryParameters} or the profile's query_parameters)`}`,
          );
          return false;
        }
      }
      return true;
    });
    const data = { ...(envelope.data as Record<string, unknown>), [list.key]: kept };
    const shownJson = kept.length === items.length ? json : { ...(json as Record<string, unknown>), [list.key]: sentItems.filter((_, index) => kept.includes(items[index])) };
    return {
      page: { status: result.status, data: data as TolerantResponseOf<N>, json: shownJson, headers: result.headers },
      sent: sentItems.length,
      // An item without an id (one that does not fit) is compared whole.
      ids: JSON.stringify(sentItems.map((item) => (item as { id?: unknown } | null)?.id ?? item)),
      sentItems,
    };
  }

  /**
   * A page of a list for findOffsetName: the filters of `input` as named for the service, and
   * `extra` (a limit, offset names) as given; the items as sent, or why there are none.
   */
  async function askList<N extends EndpointName>(name: N, input: CallInput<N>, key: string, extra: Record<string, string>): Promise<Array<Record<string, unknown>> | string> {
    await readKnown(name);
    const spec = endpoints[name];
    const query = 'query' in spec ? (checkInput(spec.query, { ...(input.query ?? {}), offset: undefined, limit: undefined }, 'query') as Record<string, unknown>) : {};
    const params = 'params' in spec ? checkInput(spec.params, input.params, 'path') : {};
    const url = new URL(endpointPath(spec.path, params as Record<string, string | number>).slice(1), base);
    for (const [field, value] of Object.entries(query)) if (value !== undefined && !PAGING_KEYS.has(field)) url.searchParams.set(parameterName(name, field), String(value));
    for (const [field, value] of Object.entries(extra)) url.searchParams.set(field, value);
    const result = await transport.send({ method: spec.method, url, authenticated: 'permission' in spec, signal: input.signal });
    if (result.status < 200 || result.status > 299) return `the service answered HTTP ${result.status}`;
    try {
      const items = (JSON.parse(result.text) as Record<string, unknown> | null)?.[key];
      return Array.isArray(items) ? (items as Array<Record<string, unknown>>) : `the answer has no ${key} list`;
    } catch {
      return 'the answer is not JSON';
    }
  }

  /** Keeps the offset name found for this profile and base URL, and says so once. */
  async function rememberOffsetName(setting: string, ignored: string, found: string, requests: number): Promise<void> {
    const rule = { value: found, learned_at: options.clock.now().toISOString(), from: `--all found it after a repeated page (${requests} request${requests === 1 ? '' : 's'})` };
    const change = (current: LearnedService) => ({ ...current, query_parameters: { ...current.query_parameters, [setting]: rule } });
    known = change(known);
    const kept = options.learned === undefined ? undefined : await learn(change);
    const where =
      kept === undefined ? 'for this run' : 'problem' in kept ? `for this run (it could not be remembered: ${kept.problem})` : `for ${kept.store.whose} from now on (${kept.store.where}; \`taxprep doctor\` shows it)`;
    options.log(`note: the service ignores the query parameter "${ignored}" and honours "${found}" as the offset of ${LIST_OF_ENDPOINT.listDeliverables}; taxprep uses "${found}" ${where}`);
  }

  /** A 2xx whose coding could not be read: the service acknowledged it, so it is done, with a warning. */
  function acknowledgedUnread(result: HttpResult): boolean {
    if (result.undecodable === undefined || result.status < 200 || result.status > 299) return false;
    warn(`the service accepted the request (HTTP ${result.status}) but its answer could not be read: ${result.undecodable}`);
    return true;
  }

  const api: ApiClient = {
    call,

    async upload(accountId, file, fields, uploadOptions = {}) {
      const spec = endpoints.uploadDocument;
      const { account_id } = checkInput(spec.params, { account_id: accountId }, 'path');
      const checkedFields = checkInput(spec.body, fields, 'form');
      const url = new URL(endpointPath(spec.path, { account_id }).slice(1), base);
      const { default: FormData } = await import('form-data');
      const stream = () => {
        const form = new FormData();
        form.append('tax_year', String(checkedFields.tax_year));
        if (checkedFields.description !== undefined) form.append('description', checkedFields.description);
        // form-data cannot measure an empty stream (it ignores a knownLength of 0): an empty file goes as an empty buffer.
        const fileStream = file.size === 0 ? Buffer.alloc(0) : (file.open?.() ?? createReadStream(file.path));
        let sent = 0;
        if (!Buffer.isBuffer(fileStream)) {
          fileStream.on('data', (chunk: Buffer) => {
            sent += chunk.length;
            uploadOptions.onProgress?.(sent);
          });
        }
        form.append('file', fileStream, { filename: file.filename, contentType: file.contentType, knownLength: file.size });
        // Measured before piping: once form-data starts emitting, its length no longer counts what was sent.
        const length = form.getLengthSync();
        // form-data is an old-style stream; piping it into a PassThrough gives undici a real Readable.
        const body = form.pipe(new PassThrough());
        return { body, headers: { ...form.getHeaders(), 'content-length': String(length) } };
      };
      const request: OutgoingRequest = { method: 'POST', url, authenticated: true, body: { stream }, signal: uploadOptions.signal };
      const result = await transport.send(request);
      const learnedNote = await learnFromUploadRefusal(result);
      try {
        return readAnswer('uploadDocument', result);
      } catch (error) {
        if (learnedNote === undefined || !(error instanceof ApiError)) throw error;
        throw new ApiError(error.status, error.toBody(), { hint: error.hint === undefined ? learnedNote : `${error.hint}\n${learnedNote}`, retryAfterSeconds: error.retryAfterSeconds });
      }
    },

    /**
     * Ends on its own: when `has_more` is false, a page is empty, the offset reaches `total_count`;
     * beyond `maxPages` pages it fails with LIMIT. A page that repeats the previous one means the
     * service ignored the offset as named: for a list whose offset's name the contract leaves
     * unconfirmed, the name the service honours is looked for (findOffsetName), remembered for the
     * profile and base URL, and paging goes on under it; otherwise, or when no name is found, it
     * fails with INVALID_RESPONSE (exit 8) after the pages read: never a short list as a success.
     */
    async *pages(name, input = {}, pageOptions = {}) {
      const maxPages = pageOptions.maxPages ?? DEFAULT_MAX_PAGES;
      const key = LIST_KEYS[name];
      const query = { ...(input.query as Record<string, unknown> | undefined) };
      let offset = Number(query.offset ?? 0);
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      const offsetSetting = configurableFilter(name, 'offset');
      let previousIds: string | undefined;
      let firstItems: unknown[] | undefined;
      let searched = false;
      for (let pageNumber = 1; ; pageNumber += 1) {
        if (pageNumber > maxPages) {
          throw new LimitError('TOO_MANY_PAGES', `stopped after ${maxPages} pages (${offset} ${key}): the service still said more follow`, {
            hint: 'Raise --max-pages if the list is really that long, or narrow it with filters.',
            details: { max_pages: maxPages, offset },
          });
        }
        const read = await readList(name, { ...input, query: { ...query, limit, offset } } as CallInput<typeof name>);
        if (read.sent > 0 && read.ids === previousIds) {
          const parameter = parameterName(name, 'offset');
          if (offsetSetting === undefined || searched) throw repeatedPage(key, offset, parameter, offsetSetting);
          searched = true;
          // The first page read is the list's start only when paging began at offset 0; otherwise the finder reads the start itself.
          const baseline = Number(query.offset ?? 0) === 0 ? (firstItems as Array<Record<string, unknown>>) : [];
          const finding = await findOffsetName((extra) => askList(name, input, key, extra), parameter, baseline);
          if ('problem' in finding) throw repeatedPage(key, offset, parameter, offsetSetting, `${finding.problem} (${finding.requests} request${finding.requests === 1 ? '' : 's'} spent looking)`);
          await rememberOffsetName(offsetSetting, parameter, finding.found, finding.requests);
          pageNumber -= 1;
          continue;
        }
        previousIds = read.ids;
        firstItems ??= read.sentItems;
        yield read.page;
        const { has_more: hasMore, total_count: totalCount } = read.page.data as { has_more?: unknown; total_count?: unknown };
        offset += read.sent;
        if (read.sent === 0 || hasMore === false) return;
        if (typeof totalCount === 'number' && offset >= totalCount) return;
        if (hasMore !== true && typeof totalCount !== 'number' && read.sent < Number(limit)) return;
      }
    },

    async raw(method, path, rawOptions = {}) {
      const upper = method.toUpperCase();
      if (!/^[A-Z]+$/.test(upper)) throw new UsageError(`"${method}" is not an HTTP method`, { details: { method: ['must be an HTTP method such as GET or POST'] } });
      const url = resolveRawUrl(path, options.baseUrl, transport);
      for (const [key, value] of Object.entries(rawOptions.query ?? {})) url.searchParams.append(key, value);
      const request: OutgoingRequest = { method: upper, url, authenticated: rawOptions.anonymous !== true, headers: rawOptions.headers, signal: rawOptions.signal };
      if (rawOptions.body !== undefined) request.body = { json: rawOptions.body };
      const result = await transport.send(request);
      // A read gains nothing from an answer it cannot read; any other method may have acted.
      if (result.undecodable !== undefined && (upper === 'GET' || upper === 'HEAD' || !acknowledgedUnread(result))) throw undecodableAnswer(result, result.undecodable);
      let json: unknown;
      try {
        json = result.text === '' ? undefined : JSON.parse(result.text);
      } catch {
        json = undefined;
      }
      return { status: result.status, headers: result.headers, json, text: result.text };
    },
  };
  return { api, close: () => transport.close() };
}

/**
 * `taxprep api` paths: relative to the base URL (`accounts/1` or `/accounts/1`), or including its
 * version segment (`/v1beta/accounts/1`). An absolute URL must be on the base URL's origin: the
 * key goes nowhere else.
 */
export function resolveRawUrl(path: string, baseUrl: string, transport: Pick<Transport, 'origin'>): URL {
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) {
    const url = new URL(path);
    if (url.origin !== transport.origin) {
      throw new UsageError(`${url.origin} is not the service's origin (${transport.origin}); the API key is only sent there`, {
        details: { path: ['must be a path under the base URL, or a URL on its origin'] },
      });
    }
    return url;
  }
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  const full = basePath !== '' && (withSlash === basePath || withSlash.startsWith(`${basePath}/`)) ? withSlash : `${basePath}${withSlash}`;
  return new URL(full, transport.origin);
}

/**
 * An answer whose content coding could not be read: a read fails with INVALID_RESPONSE (exit 8);
 * an error answer keeps its status's code and exit class (`HTTP_404`, exit 4).
 */
function undecodableAnswer(result: HttpResult, reason: string): ProtocolError | ApiError {
  const message = `the service's answer (HTTP ${result.status}) could not be read: ${reason}`;
  const hint = 'A proxy in front of the service may be compressing answers; run with --verbose to see its headers.';
  if (result.status >= 200 && result.status <= 299) return new ProtocolError(message, { hint });
  return new ApiError(result.status, { error: { code: `HTTP_${result.status}`, message } }, { hint });
}

/**
 * Why `--all` stopped early: a page that repeats the previous one means the service ignores the
 * offset as named, so the list read is incomplete; a failure, never a short list with exit 0.
 */
function repeatedPage(key: string, offset: number, parameter: string, setting: string | undefined, searched?: string): ProtocolError {
  const rename = setting === undefined ? undefined : `If you know the service's name for the offset, set "${setting}" in ${ENVIRONMENT_VARIABLES.queryParameters} or the profile's query_parameters.`;
  const looked = searched === undefined ? '' : `; no other name was found: ${searched}`;
  return new ProtocolError(
    `the service sent the same ${key} again at offset ${offset}, as if it ignored the query parameter "${parameter}"${looked}; ` +
      `the ${key} read are shown, but the list is incomplete: run \`taxprep doctor\` to see which names the service honours`,
    { ...(rename === undefined ? {} : { hint: rename }), details: { offset, parameter, ...(setting === undefined ? {} : { setting }) } },
  );
}

/** " (id 17)" when an item has an id to name it by. */
function describeId(item: unknown): string {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'number' || typeof id === 'string' ? ` (id ${id})` : '';
}

/** Input is checked with the contract's own schemas before anything is sent. */
function checkInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value, PARSE_WITHOUT_JIT);
  if (parsed.success) return parsed.data;
  const details = fieldErrors(parsed.error);
  throw new UsageError(`invalid ${where}: ${describeFieldErrors(details)}`, { details });
}
