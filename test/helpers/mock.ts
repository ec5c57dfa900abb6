import { createMockServer, type MockServer, type MockServerOptions } from '../../src/mock/server';
import { DEMO_API_KEYS } from '../../src/mock/seed';

export interface MockResponse {
  status: number;
  headers: Record<string, string>;
  /** The parsed JSON body; undefined when the body was empty. */
  json: any;
}

export interface RequestOptions {
  method?: string;
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** An object or array is sent as JSON (with its content type); a string is sent as it is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RunningMock {
  baseUrl: string;
  appUrl: string;
  keys: typeof DEMO_API_KEYS;
  deps: MockServer['deps'];
  app: MockServer['app'];
  /** `path` is below the base URL (`/accounts/1`) unless it starts with `/_mock` or `/auth`, which are below the app URL. */
  request(path: string, options?: RequestOptions): Promise<MockResponse>;
  close(): Promise<void>;
}

/**
 * A real mock server on 127.0.0.1 with an ephemeral port, answers checked against the contract's
 * response schemas. Defaults to the demo data and the contract's rate limits.
 */
export async function startMock(options: MockServerOptions = {}): Promise<RunningMock> {
  const server = await createMockServer({ host: '127.0.0.1', port: 0, validateResponses: true, ...options });
  return {
    baseUrl: server.baseUrl,
    appUrl: server.appUrl,
    keys: DEMO_API_KEYS,
    deps: server.deps,
    app: server.app,
    request: (path, requestOptions = {}) => {
      const isAppPath = path.startsWith('/_mock') || path.startsWith('/auth');
      return send((isAppPath ? server.appUrl : server.baseUrl) + path, requestOptions);
    },
    close: () => server.close(),
  };
}

export async function send(url: string, options: RequestOptions = {}): Promise<MockResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (typeof options.body === 'string') body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), json: text === '' ? undefined : JSON.parse(text) };
}
