import type { StateBackend } from './state/backend';
import type { Readable, Writable } from 'node:stream';
import type { ApiClient } from './api/types';
import type { LearnedStore } from './config/learned';
import type { CredentialStore } from './config/credentialStore';
import type { CliError } from './errors';
import type { CaFile } from './config/caFile';
import type { Trust } from './api/trust';

/**
 * The types every layer shares: streams, settings, profiles, the clock and the context commands
 * receive. They live below every layer (no imports but types), so api/, config/, output/ and the
 * rest never import the factory in src/context.ts.
 */
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
  /** `--ca-file PATH`: certificate authorities trusted beside the system's (read with the settings). */
  caFile?: string;
  /** `--state-url`: the shared store of taxprep's state (src/state/). */
  stateUrl?: string;
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
  /** Where the key in use lives, in words (`credential store (Secret Service)`, `insecure file <path>`, ...). */
  apiKeyLocation?: string;
  /** Why the profile's key could not be read (a locked store, a failed key command): thrown when a command needs the key. */
  apiKeyProblem?: CliError;
  /** The largest answer taxprep reads (flag, environment, profile, default 8 MB). */
  maxResponseBytes: number;
  /** The query parameter name sent for each filter the contract does not name (`projects.type` -> `type`). */
  queryParameters: Record<string, string>;
  /** The profile's `upload_max_size` in bytes, when set by hand (the contract does not show the limit). */
  uploadMaxBytes?: number;
  /** The profile's `upload_types` (media types and `.extensions`, lower case), when set by hand. */
  uploadTypes?: string[];
  /** The CA file (flag, environment, profile) and its certificates, when one is named. */
  caFile?: CaFile;
  /** Where taxprep's state is shared (flag, environment, profile); absent: files on this machine. */
  state?: StateSetting;
}

/** A shared store of taxprep's state: its URL (it may hold a password: print it only through `redactStateUrl`) and namespace. */
export interface StateSetting {
  url: string;
  source: SettingSource;
  namespace: string;
}

/**
 * Where a profile's key lives: the system's credential store (the default), the standard output
 * of a command (`--api-key-command`), or the profile file in plain text (`--insecure-storage`, and
 * every profile from before the credential store).
 */
export type KeyStorage = 'credential-store' | 'command' | 'file';

export interface Profile {
  name: string;
  baseUrl: string;
  /**
   * Absent: the key is in the file, as in every profile from before the credential store (`doctor`
   * flags these); `file`: put there on purpose, with `--insecure-storage`.
   */
  keyStorage?: KeyStorage;
  /** The key itself: only for a key in the file. */
  apiKey?: string;
  /** `api_key_command` in the file: for `keyStorage: 'command'`. */
  apiKeyCommand?: string;
  /** `max_response_size` in the file, e.g. "16MB". */
  maxResponseSize?: string;
  /** `query_parameters` in the file: names of the filters the contract does not show. */
  queryParameters?: Record<string, string>;
  /** `upload_max_size` in the file, e.g. "25MB": the service's upload limit, when known. */
  uploadMaxSize?: string;
  /** `upload_types` in the file: the file types the service takes, when known. */
  uploadTypes?: string[];
  /** `ca_file` in the file: a PEM bundle of certificate authorities trusted beside the system's. */
  caFile?: string;
  /** `state_url` and `state_namespace` in the file: taxprep's state in a shared store (docs/team.md). */
  stateUrl?: string;
  stateNamespace?: string;
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

export interface ApiOptions {
  /** Default true: fail before any request when no usable key is configured. */
  requireKey?: boolean;
  /**
   * False: never retry, so that every request sent is one counted (`doctor`'s budget). The first
   * call of `api()` builds the client; later options of this kind change nothing.
   */
  retry?: boolean;
  /**
   * A client of its own for another service or key than the settings' (`profiles add` checks a key
   * before storing it); not shared, closed with the context.
   */
  service?: { baseUrl: string; apiKey: string; profileName: string };
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
  /** The system's credential store; its native binding loads on the first read or write. */
  credentials(): CredentialStore;
  settings(): Promise<ResolvedSettings>;
  /** What was learned from the service of the resolved settings (profile and base URL; with a shared store, its namespace's): src/config/learned.ts. */
  learned(): Promise<LearnedStore>;
  /** The certificate authorities every TLS connection trusts (src/api/trust.ts): made from the settings' CA file, read when first asked. */
  trust(): Promise<Trust>;
  /** Where taxprep's state is kept: files on this machine, or the shared store of a state URL (src/state/backend.ts). */
  state(): Promise<StateBackend>;
  /** An API client for the resolved settings; fails with `MissingCredentialsError` when `requireKey` and no key is set. */
  api(options?: ApiOptions): Promise<ApiClient>;
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
