import { createReadStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import type { z } from 'zod';
import { endpointPath, endpoints, type EndpointName, type ResponseOf } from '../contract/endpoints';
import { describeFieldErrors, fieldErrors } from '../contract/rules';
import type { Clock, GlobalOptions, ResolvedSettings } from '../context';
import { ProtocolError, UsageError } from '../errors';
import { describeKeySource } from '../config/settings';
import type { ApiClient, ApiResponse, CallInput } from './types';
import { apiErrorFrom, type ErrorContext } from './errors';
import { createTransport, rateLimitWait, type HttpResult, type OutgoingRequest, type Transport } from './http';
import { DEFAULT_MAX_RETRIES, RETRY_BUDGET_MS } from './retry';

export const DEFAULT_TIMEOUT_MS = 30_000;
/** `pages()` asks for the contract's largest page unless told otherwise: fewest requests. */
const DEFAULT_PAGE_SIZE = 100;

export interface ApiClientOptions {
  baseUrl: string;
  apiKey: string | undefined;
  settings: ResolvedSettings;
  globals: Pick<GlobalOptions, 'timeoutMs' | 'maxRetries' | 'retry' | 'verbose'>;
  env: Record<string, string | undefined>;
  clock: Clock;
  random: () => number;
  log: (line: string) => void;
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
  });
  const errorContext: ErrorContext = { keySource: describeKeySource(options.settings) };
  const base = `${options.baseUrl}/`;

  async function call<N extends EndpointName>(name: N, input: CallInput<N> = {}): Promise<ApiResponse<ResponseOf<N>>> {
    const spec = endpoints[name];
    const params = 'params' in spec ? checkInput(spec.params, input.params, 'path') : {};
    const query = 'query' in spec ? checkInput(spec.query, input.query ?? {}, 'query') : {};
    const url = new URL(endpointPath(spec.path, params as Record<string, string | number>).slice(1), base);
    for (const [key, value] of Object.entries(query as Record<string, unknown>)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const request: OutgoingRequest = { method: spec.method, url, authenticated: 'permission' in spec, signal: input.signal };
    if ('body' in spec && !('multipart' in spec)) request.body = { json: checkInput(spec.body, input.body ?? {}, 'body') };
    return parseAnswer(spec.response, await transport.send(request)) as ApiResponse<ResponseOf<N>>;
  }

  function parseAnswer(schema: z.ZodType, result: HttpResult): ApiResponse<unknown> {
    if (result.status < 200 || result.status > 299) {
      throw apiErrorFrom(result.status, result.text, errorContext, rateLimitWait(result, options.clock.now()));
    }
    let json: unknown;
    try {
      json = JSON.parse(result.text);
    } catch {
      throw new ProtocolError(`the service answered HTTP ${result.status} with a body that is not JSON`, {
        hint: 'Check that the base URL points at the service (`taxprep whoami`).',
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const problems = describeFieldErrors(fieldErrors(parsed.error));
      throw new ProtocolError(`the service's answer does not match the contract: ${problems}`, {
        hint: 'Run with --json to see the document as sent, and report it.',
      });
    }
    return { status: result.status, data: parsed.data, json, headers: result.headers };
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
        const fileStream = createReadStream(file.path);
        let sent = 0;
        fileStream.on('data', (chunk) => {
          sent += chunk.length;
          uploadOptions.onProgress?.(sent);
        });
        form.append('file', fileStream, { filename: file.filename, contentType: file.contentType, knownLength: file.size });
        // form-data is an old-style stream; piping it into a PassThrough gives undici a real Readable.
        const body = form.pipe(new PassThrough());
        return { body, headers: { ...form.getHeaders(), 'content-length': String(form.getLengthSync()) } };
      };
      const request: OutgoingRequest = { method: 'POST', url, authenticated: true, body: { stream }, signal: uploadOptions.signal };
      return parseAnswer(spec.response, await transport.send(request)) as ApiResponse<ResponseOf<'uploadDocument'>>;
    },

    async *pages(name, input = {}) {
      const itemsKey = name === 'listDocuments' ? 'documents' : 'deliverables';
      const query = { ...(input.query as Record<string, unknown> | undefined) };
      let offset = Number(query.offset ?? 0);
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      for (;;) {
        const page = await call(name, { ...input, query: { ...query, limit, offset } } as CallInput<typeof name>);
        yield page;
        const items = (page.data as Record<string, unknown[]>)[itemsKey] ?? [];
        if (!(page.data as { has_more: boolean }).has_more) return;
        if (items.length === 0) {
          throw new ProtocolError(`the service said more ${itemsKey} follow offset ${offset} but sent none`);
        }
        offset += items.length;
      }
    },

    async raw(method, path, rawOptions = {}) {
      const upper = method.toUpperCase();
      if (!/^[A-Z]+$/.test(upper)) throw new UsageError(`"${method}" is not an HTTP method`, { details: { method: ['must be an HTTP method such as GET or POST'] } });
      const url = resolveRawUrl(path, options.baseUrl, transport);
      for (const [key, value] of Object.entries(rawOptions.query ?? {})) url.searchParams.append(key, value);
      const request: OutgoingRequest = { method: upper, url, authenticated: true, headers: rawOptions.headers, signal: rawOptions.signal };
      if (rawOptions.body !== undefined) request.body = { json: rawOptions.body };
      const result = await transport.send(request);
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

/** Input is checked with the contract's own schemas before anything is sent. */
function checkInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = fieldErrors(parsed.error);
  throw new UsageError(`invalid ${where}: ${describeFieldErrors(details)}`, { details });
}
