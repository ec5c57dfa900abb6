import { describe, expect, it } from 'vitest';
import { openCredentialStore, storeFailureReason, type KeyringBinding, type KeyringEntry } from '../../src/config/credentialStore';
import { readProfileKey } from '../../src/config/profileKey';
import { splitCommandLine } from '../../src/config/keyCommand';
import { MissingCredentialsError, UsageError } from '../../src/errors';

/** A binding like @napi-rs/keyring's, over a map, recording how each entry was made. */
function fakeBinding(fail?: Error) {
  const entries = new Map<string, string>();
  const made: Array<{ service: string; account: string; options: unknown }> = [];
  const binding: KeyringBinding = {
    Entry: class implements KeyringEntry {
      constructor(
        private readonly service: string,
        private readonly account: string,
        options?: unknown,
      ) {
        made.push({ service, account, options });
      }
      getPassword() {
        if (fail) throw fail;
        return entries.get(`${this.service}/${this.account}`) ?? null;
      }
      setPassword(password: string) {
        if (fail) throw fail;
        entries.set(`${this.service}/${this.account}`, password);
      }
      deletePassword() {
        if (fail) throw fail;
        return entries.delete(`${this.service}/${this.account}`);
      }
    },
  };
  return { binding: () => binding, entries, made };
}

const KEY = 'tpk_FakeStoredKey000000000001';

describe.each([
  ['darwin', 'credential store (macOS Keychain)'],
  ['win32', 'credential store (Windows Credential Manager)'],
  ['linux', 'credential store (Secret Service)'],
] as const)('the credential store on %s, through the binding', (platform, label) => {
  it('writes, reads and deletes under service taxprep, account <profile>@<base URL>', async () => {
    const fake = fakeBinding();
    const store = openCredentialStore({ platform, binding: fake.binding });
    expect(store.label).toBe(label);
    await store.set('acme@https://x.example/v1beta', KEY);
    expect(fake.entries.get('taxprep/acme@https://x.example/v1beta')).toBe(KEY);
    const profile = { name: 'acme', baseUrl: 'https://x.example/v1beta', keyStorage: 'credential-store' as const };
    expect(await readProfileKey(profile, { env: {}, credentials: () => store })).toBe(KEY);
    expect(await store.delete('acme@https://x.example/v1beta')).toBe(true);
    await expect(readProfileKey(profile, { env: {}, credentials: () => store })).rejects.toThrow(`the ${label} has no key for profile "acme" (https://x.example/v1beta)`);
    // Only on Linux is the entry pinned to the Secret Service (never the kernel keyring).
    expect(fake.made[0]!.options).toEqual(platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined);
  });

  it('a store that refuses is exit 3 for a read, naming the profile and the reason', async () => {
    const store = openCredentialStore({ platform, binding: fakeBinding(new Error('Platform failure: access denied by the user')).binding });
    const error = await readProfileKey({ name: 'acme', baseUrl: 'https://x.example/v1beta', keyStorage: 'credential-store' }, { env: {}, credentials: () => store }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MissingCredentialsError);
    expect((error as Error).message).toBe(`the key of profile "acme" is in the ${label}, which cannot be read: access denied by the user`);
  });
});

describe('the binding that cannot load', () => {
  it('is a store that cannot be used, with the loader\'s reason', async () => {
    const store = openCredentialStore({ platform: 'linux', binding: () => { throw new Error('this single executable cannot reach the credential store: its addon is not installed beside it'); } });
    await expect(store.get('a@b')).rejects.toThrow('the credential store (Secret Service) cannot be used: this single executable cannot reach the credential store');
  });
});

describe('storeFailureReason', () => {
  it.each([
    ['Platform failure: DBus error: Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead', 'no Secret Service on the D-Bus session bus'],
    ["Couldn't access platform storage: SS Error: object locked", 'the keyring is locked'],
    ['Secret Service: unlock prompt was dismissed', 'the keyring is locked'],
    ['Platform failure: something else', 'something else'],
  ])('%s -> %s', (message, reason) => {
    expect(storeFailureReason(new Error(message))).toBe(reason);
  });
});

describe('splitCommandLine: words as a POSIX shell splits them, without a shell', () => {
  it.each<[string, string[]]>([
    ['op read op://Partners/taxprep/key', ['op', 'read', 'op://Partners/taxprep/key']],
    ["  pass   show 'taxprep/acme key' ", ['pass', 'show', 'taxprep/acme key']],
    ['vault kv get -field=key "secret/taxprep acme"', ['vault', 'kv', 'get', '-field=key', 'secret/taxprep acme']],
    ['printf "%s\\n" a\\ b', ['printf', '%s\\n', 'a b']],
    ['echo "a \\"quoted\\" \\$word" \'it\'"s"', ['echo', 'a "quoted" $word', 'its']],
    ["echo ''", ['echo', '']],
  ])('%s', (line, words) => {
    expect(splitCommandLine(line)).toEqual(words);
  });

  it.each([
    ["op read 'unterminated", /unterminated single quote/],
    ['op read "unterminated', /unterminated double quote/],
    ['op read x\\', /ends with a lone backslash/],
    ['op read x | head -1', /"\|" would need one/],
    ['cat $HOME/key', /"\$" would need one/],
    ['echo "$HOME"', /"\$" and "`" expand nothing inside double quotes/],
    ['   ', /must name a command/],
  ])('refuses %s (exit 2)', (line, message) => {
    expect(() => splitCommandLine(line)).toThrow(UsageError);
    expect(() => splitCommandLine(line)).toThrow(message);
  });
});
