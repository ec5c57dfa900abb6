import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UsageError } from '../errors';
import { appDirectory } from '../lib/paths';

type Env = Record<string, string | undefined>;

/**
 * What taxprep learned from a service about the rules the contract leaves "not shown", per profile
 * and base URL: an upload limit or a list of file types the service named in its own refusal, the
 * name of the deliverable list's offset that `--all` found. Kept in `learned.json` beside the
 * profile file, so that the next run knows it too (and `doctor` shows it); with a shared state store,
 * in the store, for the team's namespace and base URL (src/state/sharedLearned.ts). A hand setting in the
 * profile wins over anything learned; nothing here is a guess: each rule is the service's own word.
 * The file names hosts and what they refused, nothing secret, but it is the user's alone (0600).
 */

/** One rule and where it came from. */
export interface LearnedRule<T> {
  value: T;
  /** When it was learned (ISO 8601). */
  learned_at: string;
  /** How: `HTTP 413 PAYLOAD_TOO_LARGE`, `--all found it`. */
  from: string;
}

export interface LearnedService {
  /** The largest upload the service takes, in bytes. */
  upload_max_bytes?: LearnedRule<number>;
  /** The file types the service takes: media types (`application/pdf`) and extensions (`.pdf`), lower case. */
  upload_types?: LearnedRule<string[]>;
  /** Query parameter names found honoured, by settings key (`deliverables.offset`). */
  query_parameters?: Record<string, LearnedRule<string>>;
}

interface StoredServices {
  services?: Record<string, LearnedService & { profile: string | null; base_url: string }>;
  [key: string]: unknown;
}

export interface LearnedStore {
  /** Where the rules are kept, in words: the file's path, or the shared store. */
  readonly where: string;
  /** Whose rules they are: `this profile and base URL`, or the team's namespace and base URL. */
  readonly whose: string;
  /** How a user forgets them (doctor says it). */
  readonly forget: string;
  /** What is known, read at the first call; later calls return it with this process's changes. */
  read(): Promise<LearnedService>;
  /**
   * Changes what is known and writes it at once (in a shared store, in a transaction over what is
   * there then: a rule another machine learned meanwhile is kept); returns what is known now.
   */
  update(change: (current: LearnedService) => LearnedService): Promise<LearnedService>;
}

/** `acme https://partner-api.example.com/v1beta`; `-` stands for no profile (a key from the environment). */
function serviceKey(profileName: string | null, baseUrl: string): string {
  return `${profileName ?? '-'} ${baseUrl}`;
}

export function learnedFilePath(env: Env): string {
  return join(appDirectory('config', env), 'learned.json');
}

export function openLearnedStore(env: Env, profileName: string | null, baseUrl: string): LearnedStore {
  return openLearnedFile(learnedFilePath(env), profileName, baseUrl);
}

/** The rules of a profile and base URL in a learned.json at `path` (`state export --to DIR` writes one there). */
export function openLearnedFile(path: string, profileName: string | null, baseUrl: string): LearnedStore {
  const directory = dirname(path);
  const key = serviceKey(profileName, baseUrl);
  let file: StoredServices | undefined;
  const load = (): StoredServices => (file ??= readStored(path));
  const known = (): LearnedService => {
    const { profile: _profile, base_url: _baseUrl, ...rules } = load().services?.[key] ?? { profile: profileName, base_url: baseUrl };
    return rules;
  };
  return {
    where: path,
    whose: 'this profile and base URL',
    forget: 'remove the file to forget them',
    read: async () => known(),
    async update(change) {
      const current = load();
      const next: StoredServices = { ...current, services: { ...current.services, [key]: { profile: profileName, base_url: baseUrl, ...change(known()) } } };
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      // Written whole and renamed into place: a run killed mid-write leaves the previous file.
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify(next, null, '\t')}\n`, { mode: 0o600 });
      if (process.platform !== 'win32') chmodSync(temporary, 0o600);
      renameSync(temporary, path);
      file = next;
      return known();
    },
  };
}

function readStored(path: string): StoredServices {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw unreadable(path, (error as NodeJS.ErrnoException).code ?? String(error));
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('must be a JSON object');
    return value as StoredServices;
  } catch (error) {
    throw unreadable(path, error instanceof Error ? error.message : String(error));
  }
}

/** A damaged file is the user's to fix or remove: it holds nothing that cannot be learned again. */
function unreadable(path: string, reason: string): UsageError {
  return new UsageError(`the file of what taxprep learned from services, ${path}, is not valid: ${reason}`, {
    hint: 'Remove it: taxprep learns each rule again from the service when it meets it.',
  });
}

/** `learned from the service's refusal (HTTP 413 PAYLOAD_TOO_LARGE) on 2026-11-25` */
export function describeLearned(rule: LearnedRule<unknown>): string {
  return `learned from the service (${rule.from}) on ${rule.learned_at.slice(0, 10)}`;
}
