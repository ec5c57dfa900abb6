import type { Readable, Writable } from 'node:stream';
import type { ApiClient } from './api/types';
import { openUrl, readSecret, systemClock } from './io';

/** Streams and what is known about them; commands never touch `process` directly. */
export interface IO {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** Colour on stdout / stderr: a TTY, and none of NO_COLOR, TERM=dumb, --no-color (FORCE_COLOR wins). */
  stdoutColor: boolean;
  stderrColor: boolean;
  /** Terminal width for tables; 80 when not a terminal. */
  columns: number;
}

/** Flags every command accepts (defined once on the program in `src/cli.ts`). */
export interface GlobalOptions {
  json: boolean;
  /** `--json id,filename`: only these fields of the document, or of each item of a list. */
  jsonFields?: readonly string[];
  /** `--jq EXPRESSION`: the JSON output filtered by jq (implies `json`). */
  jq?: string;
  verbose: boolean;
  color: boolean;
  profile?: string;
  baseUrl?: string;
  /** Total time for one request, in milliseconds. */
  timeoutMs?: number;
  maxRetries?: number;
  retry: boolean;
  /** `--max-response-size` as given; checked with the other size settings (src/config/settings.ts). */
  maxResponseSize?: string;
}

/** Where a setting came from, for `whoami` and `--verbose`. */
export type SettingSource = 'flag' | 'environment' | 'profile' | 'default';

export interface ResolvedSettings {
  profileName: string | null;
  /** How the profile was chosen: `--profile`, TAXPREP_PROFILE, or the stored default. */
  profileSource?: SettingSource;
  baseUrl: string;
  baseUrlSource: SettingSource;
  /** Undefined when no key is configured anywhere; commands that need one fail with exit 3. */
  apiKey: string | undefined;
  apiKeySource: SettingSource | undefined;
  /** The largest answer taxprep reads (flag, environment, profile, default 8 MB). */
  maxResponseBytes: number;
  /** The query parameter name sent for each filter the contract does not name (`projects.type` -> `type`). */
  queryParameters: Record<string, string>;
}

export interface Profile {
  name: string;
  baseUrl: string;
  apiKey: string;
  /** `max_response_size` in the file, e.g. "16MB". */
  maxResponseSize?: string;
  /** `query_parameters` in the file: names of the filters the contract does not show. */
  queryParameters?: Record<string, string>;
}

/** The profile store (src/config/): read directly, written through conf; file mode 0600, one default profile. */
export interface ProfileStore {
  /** Path of the profile file, for messages. */
  readonly path: string;
  list(): Profile[];
  get(name: string): Profile | undefined;
  defaultName(): string | undefined;
  /** Adds or replaces a profile; the first profile added becomes the default. */
  save(profile: Profile): Promise<void>;
  remove(name: string): Promise<boolean>;
  setDefault(name: string): Promise<void>;
}

export interface Clock {
  now(): Date;
  /** Resolves after `ms`, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The factory: everything a command needs, built lazily so that a command pays only for what it
 * uses (`health` never loads conf when flags and environment name the base URL, say).
 * Tests build one with fake streams and a real mock server instead of spawning a process.
 */
export interface Context {
  io: IO;
  env: Record<string, string | undefined>;
  globals: GlobalOptions;
  clock: Clock;
  profiles(): Promise<ProfileStore>;
  settings(): Promise<ResolvedSettings>;
  /** An API client for the resolved settings; fails with `MissingCredentialsError` when `requireKey` and no key is set. */
  api(options?: { requireKey?: boolean }): Promise<ApiClient>;
  /** Reads a secret: a hidden prompt on a terminal, else one line of stdin. */
  readSecret(prompt: string): Promise<string>;
  /** Opens a URL in the user's browser (`--open`); prints it instead when there is no display. */
  openUrl(url: string): Promise<void>;
  /**
   * Aborted by the first Ctrl-C (SIGINT) after it was asked for, so that a command can say what it
   * did before it stops; a second Ctrl-C ends the process the usual way.
   */
  interrupted(): AbortSignal;
}

/** What `createContext` is built from; tests pass fake streams, an environment and a clock. */
export interface ContextOptions {
  io: IO;
  env: Record<string, string | undefined>;
  globals: GlobalOptions;
  clock?: Clock;
  /** Source of randomness for retry jitter (0 <= x < 1). */
  random?: () => number;
  /** What `interrupted()` listens to (returns how to stop listening); the process's SIGINT unless a test gives its own. */
  onInterrupt?: (handler: () => void) => () => void;
}

/** A context together with the means to release what it opened (the HTTP connection pool). */
export interface OwnedContext extends Context {
  close(): Promise<void>;
}

/**
 * Builds the context. Nothing heavy is imported here: the profile store (conf), the settings
 * resolution and the HTTP client (undici, zod) load on first use, so `--help` and commands that
 * need none of them stay fast.
 */
export function createContext(options: ContextOptions): OwnedContext {
  const { io, env, globals } = options;
  const clock = options.clock ?? systemClock;
  let store: Promise<ProfileStore> | undefined;
  let settings: Promise<ResolvedSettings> | undefined;
  let client: Promise<{ api: ApiClient; close(): Promise<void> }> | undefined;
  let interruption: AbortController | undefined;
  let stopListening: (() => void) | undefined;

  const profiles = () =>
    (store ??= import('./config/store').then(({ openProfileStore }) => openProfileStore(env)));

  const context: OwnedContext = {
    io,
    env,
    globals,
    clock,
    profiles,
    settings: () =>
      (settings ??= import('./config/settings').then(({ resolveSettings }) => resolveSettings({ globals, env, profiles }))),
    async api(apiOptions = {}) {
      const resolved = await context.settings();
      const { checkApiKey, usableApiKey } = await import('./config/settings');
      if (apiOptions.requireKey !== false) checkApiKey(resolved);
      client ??= import('./api/client').then(({ createApiClient }) =>
        createApiClient({
          baseUrl: resolved.baseUrl,
          apiKey: usableApiKey(resolved),
          settings: resolved,
          globals,
          env,
          clock,
          random: options.random ?? Math.random,
          log: (line) => {
            io.stderr.write(`${line}\n`);
          },
        }),
      );
      return (await client).api;
    },
    readSecret: (prompt) => readSecret(io, prompt),
    openUrl: (url) => openUrl(io, env, url),
    interrupted() {
      if (interruption === undefined) {
        const controller = new AbortController();
        interruption = controller;
        const listen =
          options.onInterrupt ??
          ((handler: () => void) => {
            process.once('SIGINT', handler);
            return () => process.off('SIGINT', handler);
          });
        stopListening = listen(() => controller.abort(new Error('interrupted')));
      }
      return interruption.signal;
    },
    async close() {
      stopListening?.();
      if (client !== undefined) await (await client).close();
    },
  };
  return context;
}
