import type { Readable } from 'node:stream';
import type { EndpointName, endpoints } from '../contract';
import type { ListEndpoint, TolerantResponseOf } from './tolerant';
import type { z } from 'zod';

type Spec<N extends EndpointName> = (typeof endpoints)[N];
type InputOf<S> = S extends z.ZodType ? z.input<S> : never;

/** What a call of endpoint N takes: path parameters, query and JSON body, as the contract names them. */
export type CallInput<N extends EndpointName> = {
  params?: Spec<N> extends { params: infer P } ? InputOf<P> : never;
  query?: Spec<N> extends { query: infer Q } ? InputOf<Q> : never;
  body?: Spec<N> extends { multipart: true } ? never : Spec<N> extends { body: infer B } ? InputOf<B> : never;
  /** Aborts the request (and its retries). */
  signal?: AbortSignal;
};

/**
 * A successful answer: `data` read with the tolerant form of the endpoint's response schema
 * (./tolerant.ts: unknown fields kept, most fields optional), `json` as the service sent it (what
 * `--json` prints; a list's items that did not match a filter the user gave are left out).
 */
export interface ApiResponse<T> {
  status: number;
  data: T;
  json: unknown;
  headers: Record<string, string>;
}

export interface UploadFile {
  path: string;
  /** Sent as the part's filename: the base name of `path` unless overridden. */
  filename: string;
  /** Sent as the part's media type: from the extension, `application/octet-stream` when unknown. */
  contentType: string;
  size: number;
  /**
   * The file's bytes, opened afresh for each attempt, instead of reading `path`: `docs sync`
   * checks what it sends against the content it planned to send.
   */
  open?: () => Readable;
}

/** The thin HTTP layer every command uses. Every failure is a `CliError` (src/errors.ts). */
export interface ApiClient {
  /** Calls a contract endpoint by its name in `src/contract/endpoints.ts`. */
  call<N extends EndpointName>(name: N, input?: CallInput<N>): Promise<ApiResponse<TolerantResponseOf<N>>>;
  /** Streams a file as multipart form data (`file`, `tax_year`, `description`); never reads it whole. */
  upload(
    accountId: number,
    file: UploadFile,
    fields: { tax_year: number; description?: string },
    options?: { onProgress?: (sentBytes: number) => void; signal?: AbortSignal },
  ): Promise<ApiResponse<TolerantResponseOf<'uploadDocument'>>>;
  /**
   * Follows `limit`/`offset` until the list ends (see the client), yielding each page as it
   * arrives. `query.limit` is the page size (default: the contract's maximum, 100).
   */
  pages<N extends ListEndpoint>(name: N, input?: CallInput<N>, options?: { maxPages?: number }): AsyncIterable<ApiResponse<TolerantResponseOf<N>>>;
  /** `taxprep api`: any method and path under the base URL, with the stored key (none when `anonymous`); the body is JSON. */
  raw(
    method: string,
    path: string,
    options?: { query?: Record<string, string>; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal; anonymous?: boolean },
  ): Promise<{ status: number; headers: Record<string, string>; json: unknown; text: string }>;
}
