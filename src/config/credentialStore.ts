import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The system's credential store (Secret Service over D-Bus on Linux, the Keychain on macOS, the
 * Credential Manager on Windows) through `@napi-rs/keyring`, a native addon. It is loaded only
 * when a command reads or writes a stored secret, so commands that need none start as before.
 *
 * Entries are named by service `taxprep` and an account that ties the secret to its profile and
 * base URL: `<profile>@<base URL>` for a partner key, `hook:<id>@<profile>@<base URL>` for a
 * webhook's secrets.
 */
export const CREDENTIAL_SERVICE = 'taxprep';

/** What taxprep uses of the binding's `Entry` (the same on every platform). */
export interface KeyringEntry {
  getPassword(): string | null;
  setPassword(password: string): void;
  deletePassword(): boolean;
}
export interface KeyringBinding {
  Entry: new (service: string, account: string, options?: { linux?: { store?: 'secret-service' | 'keyutils' } }) => KeyringEntry;
}

export interface CredentialStore {
  /** "credential store (Secret Service)" and the like, for messages. */
  readonly label: string;
  /** The secret, or undefined when the store has no such entry; rejects with `CredentialStoreUnavailable`. */
  get(account: string): Promise<string | undefined>;
  set(account: string, secret: string): Promise<void>;
  /** True when an entry was removed. */
  delete(account: string): Promise<boolean>;
}

/** The store did not answer (absent, locked, refused): `reason` says why, in the user's words. */
export class CredentialStoreUnavailable extends Error {
  constructor(
    readonly storeLabel: string,
    readonly reason: string,
  ) {
    super(`the ${storeLabel} cannot be used: ${reason}`);
  }
}

const STORE_NAMES: Record<string, string> = { linux: 'Secret Service', darwin: 'macOS Keychain', win32: 'Windows Credential Manager' };

export function credentialStoreLabel(platform: NodeJS.Platform = process.platform): string {
  return `credential store (${STORE_NAMES[platform] ?? `${platform} keyring`})`;
}

export function profileKeyAccount(profile: string, baseUrl: string): string {
  return `${profile}@${baseUrl}`;
}

/**
 * The binding's errors, turned into a reason a user can act on. The Secret Service's are the ones
 * a Linux user meets (no session bus in a container or over ssh, a keyring locked at login); any
 * other is shown as the binding wrote it.
 */
export function storeFailureReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/DBUS_SESSION_BUS_ADDRESS|No DBus session|no secret service provider|ServiceUnknown|org\.freedesktop\.secrets/i.test(message)) {
    return 'no Secret Service on the D-Bus session bus';
  }
  if (/locked|prompt (was )?dismissed/i.test(message)) return 'the keyring is locked';
  // gnome-keyring with no login keyring yet: making one needs a prompt, which a session without a display cannot show.
  if (/no result found/i.test(message)) return 'the Secret Service has no default keyring to keep it in (none was created and unlocked at login)';
  return message.replace(/^Platform failure: /, '');
}

/** Where the single executable looks for the addon: beside it (the release files), or the .deb's /usr/lib/taxprep. */
export function executableAddonPaths(executable: string): string[] {
  return [join(dirname(executable), 'taxprep-keyring.node'), join(dirname(executable), '..', 'lib', 'taxprep', 'keyring.node')];
}

export function openExecutableAddon(executable: string): KeyringBinding {
  const path = executableAddonPaths(executable).find((candidate) => existsSync(candidate));
  if (path === undefined) {
    throw new Error(`this single executable cannot reach the credential store: its addon is not installed beside it (${executableAddonPaths(executable).join(' or ')})`);
  }
  const module = { exports: {} as KeyringBinding };
  process.dlopen(module, path);
  return module.exports;
}

export function openCredentialStore(options: { platform?: NodeJS.Platform; binding?: () => KeyringBinding } = {}): CredentialStore {
  const platform = options.platform ?? process.platform;
  const label = credentialStoreLabel(platform);
  let binding: KeyringBinding | undefined;
  const entry = async (account: string): Promise<KeyringEntry> => {
    try {
      binding ??= options.binding === undefined ? (await import('./keyringBinding')).loadKeyringBinding() : options.binding();
      // Pinned to the Secret Service: the binding would otherwise fall back to the kernel's
      // keyring, which forgets everything at logout, a downgrade the user never asked for.
      return new binding.Entry(CREDENTIAL_SERVICE, account, platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined);
    } catch (error) {
      throw new CredentialStoreUnavailable(label, storeFailureReason(error));
    }
  };
  const answer = async <T>(account: string, use: (found: KeyringEntry) => T): Promise<T> => {
    const found = await entry(account);
    try {
      return use(found);
    } catch (error) {
      throw new CredentialStoreUnavailable(label, storeFailureReason(error));
    }
  };
  return {
    label,
    get: (account) => answer(account, (found) => found.getPassword() ?? undefined),
    set: (account, secret) => answer(account, (found) => found.setPassword(secret)),
    delete: (account) => answer(account, (found) => found.deletePassword()),
  };
}
