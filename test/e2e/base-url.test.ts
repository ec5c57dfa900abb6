import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINIMAL_KEY, startContractMinimalServer, type MinimalServer } from '../helpers/contractMinimalServer';
import { makeHome, registerSecret, runCli } from '../helpers/cli';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * Issue 21, case 3: a base URL without /v1beta. Its routes answer a 404 that is not the contract's
 * (the mock's "No route", a web server's HTML page): `profiles add` stores nothing and does not
 * advise --no-verify, and every command exits 11 naming the URL as given and "should end in /v1beta".
 */

let mock: ServedMock;
let minimal: MinimalServer;

beforeAll(async () => {
  [mock, minimal] = await Promise.all([startServeMock(), startContractMinimalServer()]);
  for (const key of [...Object.values(mock.keys), MINIMAL_KEY]) registerSecret(key);
});
afterAll(async () => {
  await Promise.all([mock?.stop(), minimal?.close()]);
});

const servers = () =>
  [
    ['the mock', mock.baseUrl.replace(/\/v1beta$/, ''), mock.keys['Acme production key']!],
    ['the contract-minimal server', minimal.origin, MINIMAL_KEY],
  ] as const;

describe('a base URL without /v1beta', () => {
  it.each([0, 1])('profiles add refuses it with exit 11, stores nothing, and gives no --no-verify advice (server %i)', async (index) => {
    const [, root, key] = servers()[index]!;
    const home = makeHome();
    const added = await runCli(['profiles', 'add', '--insecure-storage', 'test2', '--base-url', root, '--api-key-stdin'], { home, input: `${key}\n` });
    expect(added.exitCode).toBe(11);
    expect(added.stderr).toContain('should end in /v1beta');
    expect(added.stderr).toContain(`${root} answered HTTP 404`);
    expect(added.stderr).toContain('nothing was stored');
    expect(added.stderr).not.toContain('--no-verify');
    expect(added.stderr).not.toContain('whoami');
    const listed = await runCli(['profiles', 'list', '--json'], { home });
    expect(listed.stdout).not.toContain('test2');
  });

  it.each([0, 1])('every command names it with exit 11 (server %i)', async (index) => {
    const [, root, key] = servers()[index]!;
    const env = { TAXPREP_BASE_URL: root, TAXPREP_API_KEY: key };
    for (const args of [['accounts', 'get', '1001'], ['deliverables', 'list'], ['projects', 'list', '1001'], ['login-link', '1001', '1002', '--yes']]) {
      const result = await runCli(args, { env });
      expect([args.join(' '), result.exitCode]).toEqual([args.join(' '), 11]);
      expect(result.stderr).toContain('should end in /v1beta');
      expect(result.stderr).toContain(root);
    }
  });
});
