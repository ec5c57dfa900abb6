import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from 'zod';
import { parseJsonDocument } from '../lib/jsonDocument';
import { MissingCredentialsError, UsageError } from '../errors';
import { CredentialStoreUnavailable, type CredentialStore } from '../config/credentialStore';
import { acquireLedgerLock } from '../batch/lock';
import { writeFileAtomically } from '../lib/files';
import { appDirectory } from '../lib/paths';
import type { Clock } from '../types';

/**
 * The hooks file: every hook of every profile, in the user's config directory, 0600 (it holds
 * secrets and headers), replaced atomically under the engine's lock (src/batch/lock.ts) so that a
 * `hooks disable` and a `watch` disabling a hook after a 410 never lose each other's change.
 * A hook belongs to a profile and base URL: a command sees only the hooks of its own.
 */
export const HOOKS_FORMAT = 'taxprep-hooks';
export const HOOKS_VERSION = 1;

const Secret = z.object({ secret: z.string().startsWith('whsec_'), expires_at: z.string().nullable() });
const Secrets = z.array(Secret).min(1);
export type HookSecret = z.infer<typeof Secret>;
/** `secrets_in: "credential-store"`: the hook's secrets (the list above, as JSON) are an entry of the credential store, not in the file. */
export const SECRETS_IN_STORE = 'credential-store';
const HookSchema = z
  .object({
    id: z.string().regex(/^hk_[a-z0-9]+$/),
    profile: z.string().nullable(),
    base_url: z.string(),
    url: z.string().optional(),
    exec: z.string().optional(),
    events: z.array(z.string()).min(1),
    format: z.enum(['standard', 'text']),
    headers: z.array(z.tuple([z.string(), z.string()])),
    retry_schedule_ms: z.array(z.number().int().nonnegative()),
    timeout_ms: z.number().int().positive(),
    rate: z.object({ requests: z.number().int().positive(), window_ms: z.number().int().positive() }).nullable(),
    ordered: z.boolean(),
    allow_http: z.boolean(),
    disable_after_ms: z.number().int().positive(),
    secrets: Secrets.optional(),
    secrets_in: z.literal(SECRETS_IN_STORE).optional(),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable(),
    created_at: z.string(),
  })
  .refine((hook) => (hook.url === undefined) !== (hook.exec === undefined), { message: 'a hook has either url or exec' })
  .refine((hook) => (hook.secrets === undefined) !== (hook.secrets_in === undefined), { message: 'a hook has either secrets or secrets_in' });
export type Hook = z.infer<typeof HookSchema>;
const HooksFile = z.object({ format: z.literal(HOOKS_FORMAT), version: z.literal(HOOKS_VERSION), hooks: z.array(HookSchema) });

export function defaultHooksPath(env: Record<string, string | undefined>): string {
  return join(appDirectory('config', env), 'hooks.json');
}

export function newHookId(): string {
  return `hk_${randomBytes(6).toString('hex')}`;
}

export interface Scope {
  profile: string | null;
  baseUrl: string;
}

export function inScope(hook: Hook, scope: Scope): boolean {
  return hook.profile === scope.profile && hook.base_url === scope.baseUrl;
}

function damaged(path: string, rule: string): UsageError {
  return new UsageError(`the hooks file ${path} is damaged: ${rule}; it was left as it is`, {
    details: { hooks_file: [rule], path },
    hint: 'Fix it by hand, or move it aside and add the hooks again (their secrets change).',
  });
}

/** The credential store's entry of a hook's secrets, tied to its profile and base URL. */
export function hookSecretsAccount(hook: Pick<Hook, 'id' | 'profile' | 'base_url'>): string {
  return `hook:${hook.id}@${hook.profile ?? '-'}@${hook.base_url}`;
}

/**
 * Fills in the secrets of hooks whose secrets are in the credential store (read each time: a
 * rotation in another process shows at once). A store that cannot be read, or has no entry, is
 * exit 3 naming the hook.
 */
export async function withStoredSecrets(hooks: Hook[], credentials: CredentialStore): Promise<Hook[]> {
  for (const hook of hooks) {
    if (hook.secrets_in === undefined) continue;
    let text: string | undefined;
    try {
      text = await credentials.get(hookSecretsAccount(hook));
    } catch (error) {
      if (!(error instanceof CredentialStoreUnavailable)) throw error;
      throw new MissingCredentialsError(`the secrets of hook ${hook.id} are in the ${credentials.label}, which cannot be read: ${error.reason}`, { cause: error });
    }
    const secrets = text === undefined ? undefined : Secrets.safeParse(JSON.parse(text));
    if (secrets === undefined || !secrets.success) {
      throw new MissingCredentialsError(`the ${credentials.label} has no secrets for hook ${hook.id}`, { hint: `Give it a new secret with: taxprep hooks rotate-secret ${hook.id}` });
    }
    hook.secrets = secrets.data;
  }
  return hooks;
}

/**
 * Deletes the credential store's entry of a hook that is gone from the hooks file (gone first: an
 * entry left behind refers to nothing). A store that cannot be reached now is not an error: the
 * warning returned names the entry to remove by hand.
 */
export async function forgetStoredSecrets(hook: Hook, credentials: CredentialStore): Promise<string | undefined> {
  if (hook.secrets_in === undefined) return undefined;
  try {
    await credentials.delete(hookSecretsAccount(hook));
    return undefined;
  } catch (error) {
    if (!(error instanceof CredentialStoreUnavailable)) throw error;
    return `warning: the secret of hook ${hook.id} stays in the ${error.storeLabel} (${error.reason}): remove the entry of service "taxprep", user "${hookSecretsAccount(hook)}" there.`;
  }
}

/** The secrets of a hook read with `withStoredSecrets` (or kept in the file). */
export function secretsOf(hook: Hook): HookSecret[] {
  if (hook.secrets === undefined) throw new Error(`the secrets of hook ${hook.id} were not read from the credential store`);
  return hook.secrets;
}

/**
 * Where the hooks are kept: the hooks file (the default), or a shared store, where every machine
 * of a team sees and changes the same hooks (src/state/sharedHooks.ts). A hook's secrets live with
 * it in either.
 */
export interface HooksStore {
  /** Every hook it holds (of every profile, for the file); a damaged store is refused (exit 2). */
  read(): Promise<Hook[]>;
  /** Reads the hooks, lets `change` edit them, and writes the result whole, or nothing when `change` throws. */
  update<T>(clock: Clock, change: (hooks: Hook[]) => T): Promise<T>;
}

export function hooksFile(path: string): HooksStore {
  return { read: () => readHooks(path), update: (clock, change) => updateHooks(path, clock, change) };
}

/** The hooks of a document (the file's text, or the same JSON in a shared store); `damaged` makes the error for a rule it breaks. */
export function parseHooksDocument(text: string, damaged: (rule: string) => Error): Hook[] {
  return parseJsonDocument(text, HooksFile, damaged).hooks;
}

export function hooksDocument(hooks: Hook[]): string {
  return JSON.stringify({ format: HOOKS_FORMAT, version: HOOKS_VERSION, hooks }, null, 2);
}

/** Every hook in the file (of every profile); a missing file has none, a damaged one is refused (exit 2). */
export async function readHooks(path: string): Promise<Hook[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new UsageError(`cannot read the hooks file ${path}: ${(error as Error).message}`, { details: { hooks_file: ['cannot be read'], path } });
  }
  return parseHooksDocument(text, (rule) => damaged(path, rule));
}

/**
 * Reads the hooks, lets `change` edit them, and writes the result whole (0600, durable), under
 * the file's lock. `change` may throw (an unknown hook): then nothing is written.
 */
export async function updateHooks<T>(path: string, clock: Clock, change: (hooks: Hook[]) => T): Promise<T> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const lock = await acquireLedgerLock(path, { waitMs: 10_000, clock, kind: { label: 'hooks' } });
  try {
    const hooks = await readHooks(path);
    const result = change(hooks);
    // Secrets kept in the credential store never reach the file, even when read for this change.
    const stored = hooks.map((hook) => {
      if (hook.secrets_in === undefined) return hook;
      const { secrets: _read, ...kept } = hook;
      return kept;
    });
    await writeFileAtomically(path, `${hooksDocument(stored)}\n`, { durable: true });
    return result;
  } finally {
    await lock.release();
  }
}

/** The hook `id` of this scope, or exit 2 naming it. */
export function findHook(hooks: Hook[], scope: Scope, id: string): Hook {
  const hook = hooks.find((candidate) => candidate.id === id && inScope(candidate, scope));
  if (hook === undefined) {
    throw new UsageError(`unknown hook ${id}: no hook of this profile and base URL has that id`, {
      details: { hook: ['must be the id of a hook of this profile and base URL'] },
      hint: 'List them with: taxprep hooks list',
    });
  }
  return hook;
}

/** Secrets still live at `now`: the current one first, then a rotated one during its overlap. */
export function liveSecrets(hook: Hook, now: Date): string[] {
  return secretsOf(hook).filter((secret) => secret.expires_at === null || Date.parse(secret.expires_at) > now.getTime()).map((secret) => secret.secret);
}

export function targetOf(hook: Hook): string {
  return hook.url ?? `exec: ${hook.exec}`;
}
