import type { ApiClient } from './api/types';
import { openUrl, readSecret, systemClock } from './io';
import type { LearnedStore } from './config/learned';
import type { StateBackend } from './state/backend';
import type { Clock, Context, GlobalOptions, IO, ProfileStore, ResolvedSettings } from './types';

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

type OwnedClient = { api: ApiClient; close(): Promise<void> };

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
  let client: Promise<OwnedClient> | undefined;
  let learned: Promise<LearnedStore> | undefined;
  let state: Promise<StateBackend> | undefined;
  const others: Array<Promise<OwnedClient>> = [];
  let interruption: AbortController | undefined;
  let stopListening: (() => void) | undefined;

  const profiles = () =>
    (store ??= import('./config/store').then(({ openProfileStore }) => openProfileStore(env)));

  const makeClient = (resolved: ResolvedSettings, apiKey: string | undefined, retry: boolean, learnedStore?: LearnedStore): Promise<OwnedClient> =>
    Promise.all([import('./api/client'), import('./output/statusLine')]).then(([{ createApiClient }, { createStatusLine }]) =>
      createApiClient({
        baseUrl: resolved.baseUrl,
        learned: learnedStore,
        apiKey,
        settings: resolved,
        globals: { ...globals, retry: globals.retry && retry },
        env,
        clock,
        random: options.random ?? Math.random,
        log: (line) => {
          io.stderr.write(`${line}\n`);
        },
        // In place only on a terminal, and not among --verbose traces, which are a line each.
        retryNotes: createStatusLine(io.stderr, io.stderrIsTTY && !globals.verbose, io.columns),
      }),
    );

  const context: OwnedContext = {
    io,
    env,
    globals,
    clock,
    profiles,
    settings: () =>
      (settings ??= import('./config/settings').then(({ resolveSettings }) => resolveSettings({ globals, env, profiles }))),
    async api(apiOptions = {}) {
      if (apiOptions.service !== undefined) {
        const { DEFAULT_MAX_RESPONSE_BYTES, CONFIGURABLE_QUERY_PARAMETERS } = await import('./config/settings');
        const { baseUrl, apiKey, profileName } = apiOptions.service;
        const own = makeClient(
          { profileName, baseUrl, baseUrlSource: 'flag', apiKey, apiKeySource: 'profile', maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES, queryParameters: { ...CONFIGURABLE_QUERY_PARAMETERS } },
          apiKey,
          apiOptions.retry !== false,
        );
        others.push(own);
        return (await own).api;
      }
      const resolved = await context.settings();
      const { checkApiKey, usableApiKey } = await import('./config/settings');
      if (apiOptions.requireKey !== false) checkApiKey(resolved);
      client ??= context.learned().then((store) => makeClient(resolved, usableApiKey(resolved), apiOptions.retry !== false, store));
      return (await client).api;
    },
    learned: () =>
      (learned ??= Promise.all([context.settings(), import('./config/learned')]).then(([resolved, { openLearnedStore }]) => openLearnedStore(env, resolved.profileName, resolved.baseUrl))),
    state: () => (state ??= import('./state/backend').then(({ openStateBackend }) => openStateBackend(context))),
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
      for (const owned of [client, ...others]) if (owned !== undefined) await (await owned).close();
      // A store that could not be opened has nothing to close; its failure was the command's.
      if (state !== undefined) await (await state.catch(() => undefined))?.close();
    },
  };
  return context;
}
