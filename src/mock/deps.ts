import type { Readable } from 'node:stream';
import type { IdKind, MockState } from './state';

/**
 * What every part of the mock (router, routes, controls) is handed. Built once by `server.ts`;
 * tests build their own with an in-memory store.
 */
export interface MockDeps {
  store: MockStore;
  clock: MockClock;
  settings: MockSettings;
  requestLog: RequestLog;
}

export interface MockStore {
  readonly state: MockState;
  /** Hands out the next id of a kind (ids are never reused, even after records are removed). */
  nextId(kind: IdKind): number;
  /**
   * Persists the state when the store has a data directory: what changed since the last commit is
   * appended to the journal and flushed (src/mock/persistence.ts), so a crash leaves either the old
   * or the new state. Calls are serialised; those made during a write share the next one. When it
   * fails, the state is back to what was last saved. A no-op for an in-memory store.
   */
  commit(): Promise<void>;
  /**
   * Back to the seed the store was opened with, through `commit`: uploaded files are removed once
   * the seed is saved; when it cannot be saved, the store keeps its saved state and the call fails.
   */
  reset(): Promise<void>;
  readonly blobs: BlobStore;
  /**
   * Saves any change no commit saved yet and releases the data directory (rejecting when that last
   * save fails), or removes the temporary files of an in-memory store; the store is unusable afterwards.
   */
  close(): Promise<void>;
}

export interface BlobStore {
  /**
   * Streams `source` into a new blob without holding it in memory. Rejects with
   * `BlobTooLargeError` once more than `maxBytes` arrive, and leaves no file behind on any failure.
   */
  write(source: Readable, maxBytes: number): Promise<{ blob: string; size: number }>;
  read(blob: string): Readable;
  remove(blob: string): Promise<void>;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`file is larger than ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

/** The virtual clock: real time plus the store's `clockOffsetMs`, so it survives a restart. */
export interface MockClock {
  now(): Date;
  /** `now()` in milliseconds since the epoch, without creating a Date. */
  nowMs(): number;
  nowIso(): string;
  /** Moves the clock forward (never backward) and commits the offset. */
  advance(milliseconds: number): Promise<void>;
}

export interface RateLimitWindow {
  limit: number;
  windowSeconds: number;
}

/** Settings that the command line gives and `/_mock` controls can change while running. */
export interface MockSettings {
  /** `{base_url}`, including `/v1beta`; known once the server listens. */
  baseUrl: string;
  /** `{app_url}`: where login and view links point (the mock serves them too). */
  appUrl: string;
  /** Per API key; an empty list turns rate limiting off. */
  rateLimits: RateLimitWindow[];
  /** Largest accepted upload, in bytes (413 `PAYLOAD_TOO_LARGE` beyond it). */
  uploadMaxBytes: number;
  faults: FaultSettings;
}

/** Longest injected latency (`--latency`, `PUT /_mock/faults`): a minute is already past any client's patience. */
export const MAX_LATENCY_MS = 60_000;

export interface FaultSettings {
  /** Added to every contract request before it is handled. */
  latencyMs: number;
  /** Fraction (0-1) of contract requests answered 503 `SERVICE_UNAVAILABLE`. */
  errorRate: number;
  /** Fraction (0-1) of contract requests whose connection is destroyed without an answer. */
  dropRate: number;
}


/**
 * A request as the log records it: the raw facts, cheap to take on every request. They become a
 * `RequestLogEntry` (timestamp formatted, key redacted) only when the log is read.
 */
export interface RecordedRequest {
  atMs: number;
  method: string;
  path: string;
  /** The status answered; null when an injected fault dropped the connection without an answer. */
  status: number | null;
  /** The `Authorization` header as sent; only its redacted form ever leaves the log. */
  authorization: string | undefined;
  partner_id: number | null;
  duration_ms: number;
}

/** A logged request as `/_mock/requests` shows it. */
export type RequestLogEntry = Omit<RecordedRequest, 'atMs' | 'authorization'> & {
  at: string;
  /** Redacted key (prefix and last 4), when one was sent. */
  api_key: string | null;
};

export interface RequestLog {
  record(request: RecordedRequest): void;
  entries(): RequestLogEntry[];
  clear(): void;
}
