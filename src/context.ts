import type { ApiClient } from './api/types';
import { openUrl, readSecret, systemClock } from './io';
import type { LearnedStore } from './config/learned';
import type { StateBackend } from './state/backend';
import type { Clock, Context, GlobalOptions, IO, ProfileStore, ResolvedSettings } from './types';
import { credentialStoreLabel, openCredentialStore, type CredentialStore } from './config/credentialStore';
import type { CaFile } from './config/caFile';
import type { Trust } from './api/trust';

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
  /** The system's credential store; tests give one over a fake binding (the macOS and Windows paths). */
  credentials?: CredentialStore;
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
  let trust: Promise<Trust> | undefined;
  let state: Promise<StateBackend> | undefined;
  const others: Array<Promise<OwnedClient>> = [];
  let interruption: AbortController | undefined;
  let stopListening: (() => void) | undefined;
  let credentials = options.credentials;

  const profiles = () =>
    (store ??= import('./config/store').then(({ openProfileStore }) => openProfileStore(env)));

  const makeTrust = (caFile: CaFile | undefined): Promise<Trust> => import('./api/trust').then(({ createTrust }) => createTrust({ caFile, env }));

  const makeClient = (resolved: ResolvedSettings, apiKey: string | undefined, retry: boolean, clientTrust: Promise<Trust>, learnedStore?: () => Promise<LearnedStore>): Promise<OwnedClient> =>
    Promise.all([import('./api/client'), import('./output/statusLine'), clientTrust]).then(([{ createApiClient }, { createStatusLine }, trusted]) =>
      createApiClient({
        trust: trusted,
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
    credentials: () => (credentials ??= openCredentialStore()),
    settings: () =>
      (settings ??= Promise.all([import('./config/settings'), import('./config/profileKey')]).then(([{ resolveSettings }, { readProfileKey, profileKeyLocation }]) =>
        resolveSettings({
          globals,
          env,
          profiles,
          profileKey: (profile) => readProfileKey(profile, { env, credentials: context.credentials }),
          keyLocation: (profile, path) => profileKeyLocation(profile, credentials?.label ?? credentialStoreLabel(), path),
        }),
      )),
    async api(apiOptions = {}) {
      if (apiOptions.service !== undefined) {
        const { DEFAULT_MAX_RESPONSE_BYTES, CONFIGURABLE_QUERY_PARAMETERS, caFileOf } = await import('./config/settings');
        const { baseUrl, apiKey, profileName } = apiOptions.service;
        // Not the settings' trust: a service named outright (`profiles add`) is reached without the stored profiles.
        const own = makeClient(
          { profileName, baseUrl, baseUrlSource: 'flag', apiKey, apiKeySource: 'profile', maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES, queryParameters: { ...CONFIGURABLE_QUERY_PARAMETERS } },
          apiKey,
          apiOptions.retry !== false,
          makeTrust(caFileOf(globals, env, undefined)),
        );
        others.push(own);
        return (await own).api;
      }
      const resolved = await context.settings();
      const { checkApiKey, usableApiKey } = await import('./config/settings');
      if (apiOptions.requireKey !== false) checkApiKey(resolved);
      client ??= makeClient(resolved, usableApiKey(resolved), apiOptions.retry !== false, context.trust(), context.learned);
      return (await client).api;
    },
    learned: () =>
      (learned ??= context.settings().then(async (resolved) => {
        // A shared store keeps the team's rules; without a state URL the database client is not loaded.
        if (resolved.state !== undefined) {
          const [backend, { sharedLearned }] = await Promise.all([context.state(), import('./state/sharedLearned')]);
          if (backend.shared !== undefined) return sharedLearned(backend.shared);
        }
        const { openLearnedStore } = await import('./config/learned');
        return openLearnedStore(env, resolved.profileName, resolved.baseUrl);
      })),
    trust: () => (trust ??= context.settings().then((resolved) => makeTrust(resolved.caFile))),
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
