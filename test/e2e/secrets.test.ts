import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { verificationProblem } from '../../src/hooks/sign';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommandLine, makeHome, registerSecret, runCli } from '../helpers/cli';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * Issue 33: the partner key in the system's credential store (a real Secret Service: gnome-keyring
 * in a D-Bus session, `.ci/with-secret-service`), in the file only when asked, or from a command.
 * Without a Secret Service the store tests skip, saying why; under
 * TAXPREP_TEST_REQUIRE_SECRET_SERVICE=1 (.ci/run) they fail instead.
 */

const bus = process.env.DBUS_SESSION_BUS_ADDRESS;
const required = process.env.TAXPREP_TEST_REQUIRE_SECRET_SERVICE === '1';
const hasSecretTool = spawnSync('secret-tool', ['--version']).status === 0 || spawnSync('sh', ['-c', 'command -v secret-tool']).status === 0;
const storeAnswers = bus !== undefined && hasSecretTool && spawnSync('secret-tool', ['search', 'service', 'taxprep-probe'], { timeout: 10_000 }).status !== null;
const hasKeyringDaemon = spawnSync('sh', ['-c', 'command -v gnome-keyring-daemon && command -v dbus-run-session']).status === 0;
const NO_STORE = 'skipped: no Secret Service on the D-Bus session bus (run under .ci/with-secret-service)';

let mock: ServedMock;
let key: string;
beforeAll(async () => {
  mock = await startServeMock();
  key = mock.keys['Acme production key']!;
});
afterAll(async () => {
  await mock?.stop();
});

/** Every file under the home's config directory, read whole. */
function configFiles(home: string): Array<{ path: string; text: string }> {
  const found: Array<{ path: string; text: string }> = [];
  const walk = (directory: string) => {
    if (!existsSync(directory)) return;
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (statSync(path).isDirectory()) walk(path);
      else found.push({ path, text: readFileSync(path, 'utf8') });
    }
  };
  walk(home);
  return found;
}

const lookup = (account: string) => spawnSync('secret-tool', ['lookup', 'service', 'taxprep', 'username', account], { encoding: 'utf8' }).stdout;

it('the store tests run where CI requires them', () => {
  if (required) expect(storeAnswers, 'TAXPREP_TEST_REQUIRE_SECRET_SERVICE=1 but no Secret Service answers on the D-Bus session bus').toBe(true);
  if (required) expect(hasKeyringDaemon, 'gnome-keyring-daemon and dbus-run-session are required').toBe(true);
});

describe.skipIf(!storeAnswers)(`the credential store (Secret Service)${storeAnswers ? '' : ` (${NO_STORE})`}`, () => {
  const env = () => ({ DBUS_SESSION_BUS_ADDRESS: bus! });

  it('profiles add keeps the key out of every file; commands read it from the store; remove deletes the entry', async () => {
    const home = makeHome();
    const added = await runCli(['profiles', 'add', 'acme', '--base-url', mock.baseUrl, '--api-key-stdin'], { home, env: env(), input: `${key}\n` });
    expect(added.exitCode).toBe(0);
    expect(added.stderr).toContain('Key in credential store (Secret Service)');
    const files = configFiles(home);
    expect(files.some((file) => file.path.endsWith('profiles.json'))).toBe(true);
    for (const file of files) expect(file.text, file.path).not.toContain(key);
    expect(JSON.parse(files.find((file) => file.path.endsWith('profiles.json'))!.text).profiles.acme).toEqual({ base_url: mock.baseUrl, api_key_source: 'credential-store' });
    expect(lookup(`acme@${mock.baseUrl}`)).toBe(key);

    const got = await runCli(['accounts', 'get', '1001', '--json', 'id'], { home, env: env() });
    expect(got.exitCode).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual({ id: 1001 });
    const whoami = await runCli(['whoami', '--json'], { home, env: env() });
    expect(JSON.parse(whoami.stdout)).toMatchObject({ api_key_source: 'profile', api_key_location: 'credential store (Secret Service)' });
    const shown = await runCli(['profiles', 'show', '--json'], { home, env: env() });
    expect(JSON.parse(shown.stdout)).toMatchObject({ api_key: `${key.slice(0, 4)}…${key.slice(-4)}`, api_key_location: 'credential store (Secret Service)' });
    const doctor = await runCli(['doctor', '--offline'], { home, env: env() });
    expect(doctor.stdout).toContain('in credential store (Secret Service)');
    expect(doctor.stdout).not.toContain('in plain text');

    expect((await runCli(['profiles', 'remove', 'acme'], { home, env: env() })).exitCode).toBe(0);
    expect(lookup(`acme@${mock.baseUrl}`)).toBe('');
  });

  it("profiles remove takes the profile's webhooks and their secrets with it, and leaves another profile's", async () => {
    const home = makeHome();
    for (const name of ['acme', 'other']) {
      expect((await runCli(['profiles', 'add', name, '--base-url', mock.baseUrl, '--api-key-stdin'], { home, env: env(), input: `${key}\n` })).exitCode).toBe(0);
    }
    const hookOf = async (profile: string) => (JSON.parse((await runCli(['--profile', profile, 'hooks', 'add', 'https://crm.example.com/in', '--json'], { home, env: env() })).stdout) as { id: string }).id;
    const [mine, theirs] = [await hookOf('acme'), await hookOf('other')];
    expect(lookup(`hook:${mine}@acme@${mock.baseUrl}`)).not.toBe('');

    const removed = await runCli(['profiles', 'remove', 'acme'], { home, env: env() });
    expect([removed.exitCode, removed.stderr]).toEqual([0, `Removed profile "acme" and its key and its webhook (${mine}) with their secrets.\nThere is no default profile now; choose one with: taxprep profiles use <name>\n`]);
    const hooks = JSON.parse(readFileSync(join(home, '.config', 'taxprep', 'hooks.json'), 'utf8')).hooks as Array<{ id: string }>;
    expect(hooks.map((hook) => hook.id)).toEqual([theirs]);
    expect(lookup(`hook:${mine}@acme@${mock.baseUrl}`)).toBe('');
    expect(lookup(`hook:${theirs}@other@${mock.baseUrl}`)).not.toBe('');
  });

  it('profiles secure moves a plain-text key: killed after each step, the key is in the file or the store, and a rerun finishes', async () => {
    for (const point of ['secure.after-store', 'secure.after-verify', 'secure.after-file']) {
      const home = makeHome();
      const name = `old-${point.split('.')[1]}`;
      const directory = join(home, '.config', 'taxprep');
      mkdirSync(directory, { recursive: true });
      writeFileSync(join(directory, 'profiles.json'), JSON.stringify({ profiles: { [name]: { base_url: mock.baseUrl, api_key: key } }, default_profile: name }), { mode: 0o600 });
      const flagged = await runCli(['doctor', '--offline'], { home, env: env() });
      expect(flagged.stdout).toContain(`taxprep profiles secure ${name}`);

      const killed = await runCli(['profiles', 'secure', name], { home, env: { ...env(), TAXPREP_TEST_CRASH_AT: point } });
      expect(killed.signal, point).toBe('SIGKILL');
      const inFile = readFileSync(join(directory, 'profiles.json'), 'utf8').includes(key);
      const inStore = lookup(`${name}@${mock.baseUrl}`) === key;
      expect(inFile || inStore, point).toBe(true);
      expect(inFile, point).toBe(point !== 'secure.after-file');

      const finished = await runCli(['profiles', 'secure', name], { home, env: env() });
      expect(finished.exitCode, finished.stderr).toBe(0);
      expect(readFileSync(join(directory, 'profiles.json'), 'utf8')).not.toContain(key);
      expect(lookup(`${name}@${mock.baseUrl}`)).toBe(key);
      expect((await runCli(['accounts', 'get', '1001', '--json', 'id'], { home, env: env() })).exitCode).toBe(0);
      await runCli(['profiles', 'remove', name], { home, env: env() });
    }
  });
});

describe.skipIf(!storeAnswers)(`webhook secrets in the credential store${storeAnswers ? '' : ` (${NO_STORE})`}`, () => {
  const env = () => ({ DBUS_SESSION_BUS_ADDRESS: bus!, TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: key });

  /** A receiver on 127.0.0.1 keeping each request's headers and body. */
  async function receiver() {
    const received: Array<{ headers: Record<string, string | undefined>; body: string }> = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ headers: request.headers as Record<string, string | undefined>, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  it('hooks add keeps the secret out of hooks.json; test signs with it; rotate-secret changes the entry; remove deletes it', async () => {
    const home = makeHome();
    const target = await receiver();
    try {
      const added = await runCli(['hooks', 'add', target.url, '--json'], { home, env: env() });
      expect(added.exitCode, added.stderr).toBe(0);
      const { id, secret } = JSON.parse(added.stdout) as { id: string; secret: string };
      const account = `hook:${id}@-@${mock.baseUrl}`;
      const hooksFile = readFileSync(join(home, '.config', 'taxprep', 'hooks.json'), 'utf8');
      expect(hooksFile).not.toContain('whsec_');
      expect(JSON.parse(hooksFile).hooks[0]).toMatchObject({ id, secrets_in: 'credential-store' });
      expect(JSON.parse(lookup(account))).toEqual([{ secret, expires_at: null }]);

      const shown = await runCli(['hooks', 'show', id, '--json'], { home, env: env() });
      expect(JSON.parse(shown.stdout)).toMatchObject({ secrets_location: 'credential store (Secret Service)' });
      expect((await runCli(['hooks', 'show', id, '--secret'], { home, env: env() })).stdout).toBe(`${secret}\n`);

      expect((await runCli(['hooks', 'test', id], { home, env: env() })).exitCode).toBe(0);
      const ping = target.received.at(-1)!;
      expect(verificationProblem(secret, ping.headers, ping.body, Math.floor(Date.now() / 1000))).toBeUndefined();

      const rotated = await runCli(['hooks', 'rotate-secret', id, '--json'], { home, env: env() });
      expect(rotated.exitCode, rotated.stderr).toBe(0);
      const fresh = (JSON.parse(rotated.stdout) as { secret: string }).secret;
      expect(readFileSync(join(home, '.config', 'taxprep', 'hooks.json'), 'utf8')).not.toContain('whsec_');
      expect((JSON.parse(lookup(account)) as Array<{ secret: string }>).map((entry) => entry.secret)).toEqual([fresh, secret]);
      expect((await runCli(['hooks', 'show', id, '--secret'], { home, env: env() })).stdout).toBe(`${fresh}\n${secret}\n`);

      expect((await runCli(['hooks', 'remove', id], { home, env: env() })).exitCode).toBe(0);
      expect(lookup(account)).toBe('');
    } finally {
      await target.close();
    }
  });

  it("profiles secure moves the profile's hooks' secrets too; killed after writing them, they are in the file and the store, and a rerun finishes", async () => {
    const home = makeHome();
    const directory = join(home, '.config', 'taxprep');
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, 'profiles.json'), JSON.stringify({ profiles: { legacy: { base_url: mock.baseUrl, api_key: key } }, default_profile: 'legacy' }), { mode: 0o600 });
    const profileEnv = { DBUS_SESSION_BUS_ADDRESS: bus! };
    const added = await runCli(['hooks', 'add', 'https://crm.example.com/in', '--json'], { home, env: profileEnv });
    expect(added.exitCode, added.stderr).toBe(0);
    // A profile from before the store: its hook's secret went to the store (only --insecure-storage chooses the file).
    const { id: storedId } = JSON.parse(added.stdout) as { id: string };
    const legacyHook = { ...JSON.parse(readFileSync(join(directory, 'hooks.json'), 'utf8')).hooks[0], id: 'hk_0123456789ab', secrets: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', expires_at: null }] };
    delete legacyHook.secrets_in;
    const file = JSON.parse(readFileSync(join(directory, 'hooks.json'), 'utf8'));
    file.hooks.push(legacyHook);
    writeFileSync(join(directory, 'hooks.json'), JSON.stringify(file), { mode: 0o600 });

    const killed = await runCli(['profiles', 'secure', 'legacy'], { home, env: { ...profileEnv, TAXPREP_TEST_CRASH_AT: 'secure.after-hooks-store' } });
    expect(killed.signal).toBe('SIGKILL');
    const account = `hook:hk_0123456789ab@legacy@${mock.baseUrl}`;
    expect(readFileSync(join(directory, 'hooks.json'), 'utf8')).toContain(legacyHook.secrets[0].secret);
    expect(JSON.parse(lookup(account))).toEqual(legacyHook.secrets);

    const finished = await runCli(['profiles', 'secure', 'legacy', '--json'], { home, env: profileEnv });
    expect(finished.exitCode, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ api_key_location: 'credential store (Secret Service)', hooks_moved: ['hk_0123456789ab'] });
    expect(readFileSync(join(directory, 'hooks.json'), 'utf8')).not.toContain('whsec_');
    expect((await runCli(['hooks', 'show', 'hk_0123456789ab', '--secret'], { home, env: profileEnv })).stdout).toBe(`${legacyHook.secrets[0].secret}\n`);
    for (const id of [storedId, 'hk_0123456789ab']) await runCli(['hooks', 'remove', id], { home, env: profileEnv });
    await runCli(['profiles', 'remove', 'legacy'], { home, env: profileEnv });
  });
});

describe.skipIf(!hasKeyringDaemon)(`a locked store${hasKeyringDaemon ? '' : ' (skipped: no gnome-keyring-daemon)'}`, () => {
  it('a key in a locked keyring is exit 3 naming the profile; saving into it is exit 2 and stores nothing', () => {
    const home = makeHome();
    const keyrings = makeHome();
    // A session of its own: its login keyring unlocked, a profile added, then the keyring locked over D-Bus.
    const script = [
      'echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null',
      `printf '%s\\n' "$KEY" | ${cliCommandLine(['profiles', 'add', 'acme', '--no-verify', '--api-key-stdin'])} >/dev/null 2>&1 || exit 90`,
      'dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/collection/login >/dev/null',
      `${cliCommandLine(['whoami', '--offline'])} 2>&1; echo "exit=$?"`,
      `printf '%s\\n' "$KEY" | ${cliCommandLine(['profiles', 'add', 'other', '--no-verify', '--api-key-stdin'])} 2>&1; echo "exit=$?"`,
    ].join('\n');
    const result = spawnSync('dbus-run-session', ['--', 'bash', '-c', script], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache'), XDG_DATA_HOME: keyrings, KEY: key },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('error: the key of profile "acme" is in the credential store (Secret Service), which cannot be read: the keyring is locked\n');
    expect(result.stdout).toContain('exit=3');
    expect(result.stdout).toContain('error: cannot keep the key of profile "other" in the credential store (Secret Service): the keyring is locked; nothing was stored\n');
    expect(result.stdout).toMatch(/--insecure-storage[\s\S]*--api-key-command[\s\S]*exit=2/);
    expect(result.stdout).not.toContain(key);
    expect(readFileSync(join(home, '.config', 'taxprep', 'profiles.json'), 'utf8')).not.toContain('"other"');
  });
});

describe('no credential store', () => {
  it('profiles add says why, names --insecure-storage and --api-key-command, stores nothing (exit 2)', async () => {
    const home = makeHome();
    const added = await runCli(['profiles', 'add', 'acme', '--base-url', mock.baseUrl, '--api-key-stdin'], { home, input: `${key}\n` });
    expect(added.exitCode).toBe(2);
    expect(added.stderr).toContain('error: cannot keep the key of profile "acme" in the credential store (Secret Service): no Secret Service on the D-Bus session bus; nothing was stored\n');
    expect(added.stderr).toContain('add --insecure-storage');
    expect(added.stderr).toContain("--api-key-command 'op read op://...'");
    expect(configFiles(home).filter((file) => file.path.endsWith('profiles.json'))).toEqual([]);
  });

  it('--insecure-storage keeps the key in the 0600 file, and says so', async () => {
    const home = makeHome();
    const added = await runCli(['profiles', 'add', 'box', '--insecure-storage', '--base-url', mock.baseUrl, '--api-key-stdin'], { home, input: `${key}\n` });
    expect(added.exitCode).toBe(0);
    const file = join(home, '.config', 'taxprep', 'profiles.json');
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.box).toEqual({ base_url: mock.baseUrl, api_key_source: 'file', api_key: key });
    expect((await runCli(['doctor', '--offline'], { home })).stdout).not.toContain('profiles secure');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const whoami = await runCli(['whoami', '--json', '--offline'], { home });
    expect(JSON.parse(whoami.stdout)).toMatchObject({ api_key_location: `insecure file ${file}` });
    const fromEnv = await runCli(['whoami', '--json', '--offline'], { home, env: { TAXPREP_API_KEY: key } });
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ api_key_source: 'environment', api_key_location: 'environment variable TAXPREP_API_KEY' });
  });
});

describe('--api-key-command', () => {
  const scriptHome = makeHome();
  const script = (name: string, body: string) => {
    const path = join(scriptHome, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return path;
  };

  it('the command prints the key: the profile stores only the command; it runs once per process', async () => {
    const home = makeHome();
    const counter = join(home, 'runs');
    const keyFile = join(home, 'key.txt');
    writeFileSync(keyFile, `${key}\n`);
    const printer = script('print-key', `echo run >> '${counter}'\ncat "${'$'}1"`);
    const added = await runCli(['profiles', 'add', 'op', '--base-url', mock.baseUrl, '--api-key-command', `${printer} '${keyFile}'`], { home });
    expect(added.exitCode, added.stderr).toBe(0);
    expect(readFileSync(join(home, '.config', 'taxprep', 'profiles.json'), 'utf8')).not.toContain(`"api_key": `);
    execFileSync('rm', ['-f', counter]);
    const got = await runCli(['accounts', 'get', '1001', '--json', 'id'], { home });
    expect(got.exitCode).toBe(0);
    expect(readFileSync(counter, 'utf8')).toBe('run\n');
    expect(JSON.parse((await runCli(['whoami', '--json', '--offline'], { home })).stdout).api_key_location).toBe(`command \`${printer} '${keyFile}'\``);
  });

  it.each([
    ['fails', 'echo "the vault said no" >&2; echo tpk_LeakedOnStdout0000000000; exit 4', /failed \(exit 4\); it said: the vault said no\n/],
    ['prints nothing', 'exit 0', /printed no key\n/],
    ['hangs past its timeout', 'echo tpk_LeakedOnStdout0000000000; sleep 30', /did not finish within 1s and was stopped \(TAXPREP_API_KEY_COMMAND_TIMEOUT sets the limit\)\n/],
  ])('a command that %s: exit 3 naming the profile, its stdout never shown', async (_what, body, message) => {
    const home = makeHome();
    const directory = join(home, '.config', 'taxprep');
    mkdirSync(directory, { recursive: true });
    const command = script(`key-${body.length}`, body);
    writeFileSync(join(directory, 'profiles.json'), JSON.stringify({ profiles: { op: { base_url: mock.baseUrl, api_key_source: 'command', api_key_command: command } }, default_profile: 'op' }));
    const started = Date.now();
    const got = await runCli(['accounts', 'get', '1001'], { home, env: { TAXPREP_API_KEY_COMMAND_TIMEOUT: '1s' } });
    expect(got.exitCode).toBe(3);
    expect(got.stderr).toMatch(/^error: the API key command of profile "op" \(/);
    expect(got.stderr).toMatch(message);
    expect(got.stderr + got.stdout).not.toContain('tpk_LeakedOnStdout');
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
