import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, registerSecret, runCli } from '../helpers/cli';
import { startServeMock, type ServedMock } from '../helpers/serveMock';
import { issue, makeCa, selfSignedCertificate, startTlsForwarder, tempDirectory, type Ca, type TlsForwarder } from '../helpers/tlsServers';

/**
 * Issue 35: TLS for real. `serve --mock` behind TLS servers on 127.0.0.1 whose certificates are
 * signed by throwaway CAs made for this run (openssl): trusted through --ca-file,
 * TAXPREP_CA_FILE, the profile's ca_file and NODE_EXTRA_CA_CERTS; each cause of failure with its
 * message, the certificate's subject and issuer, and exit 7; doctor's chain and the store that
 * trusted it. (The system's store: .ci/system-ca-check, which needs root.)
 */

const dir = tempDirectory();
let mock: ServedMock;
let mockPort: number;
let ca: Ca;
let key: string;
const servers: Record<string, TlsForwarder> = {};
const day = 24 * 3600 * 1000;
const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]|\.\d+/g, '');

beforeAll(async () => {
  mock = await startServeMock();
  key = mock.keys['Acme production key']!;
  registerSecret(key);
  mockPort = Number(new URL(mock.baseUrl).port);
  ca = makeCa(dir, 'Taxprep Test Inspection CA');
  const other = makeCa(dir, 'Some Other CA');
  const names = ['DNS:localhost', 'IP:127.0.0.1'];
  const certificates = {
    good: issue(dir, ca, { commonName: 'localhost', names }),
    untrusted: issue(dir, other, { commonName: 'localhost', names }),
    expired: issue(dir, ca, { commonName: 'localhost', names, startDate: stamp(Date.now() - 40 * day), endDate: stamp(Date.now() - 10 * day) }),
    future: issue(dir, ca, { commonName: 'localhost', names, startDate: stamp(Date.now() + 10 * day), endDate: stamp(Date.now() + 40 * day) }),
    otherName: issue(dir, ca, { commonName: 'api.example.com', names: ['DNS:api.example.com'] }),
    selfSigned: selfSignedCertificate(dir, 'localhost', names),
  };
  for (const [name, certificate] of Object.entries(certificates)) servers[name] = await startTlsForwarder(certificate, mockPort);
}, 60_000);

afterAll(async () => {
  await Promise.all([mock?.stop(), ...Object.values(servers).map((server) => server.close())]);
});

const httpsBase = (server: string, host = '127.0.0.1') => `https://${host}:${servers[server]!.port}/v1beta`;
const withKey = (baseUrl: string, env: Record<string, string> = {}) => ({ env: { TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: key, ...env } });

describe('trusted', () => {
  it('through --ca-file', async () => {
    const result = await runCli(['accounts', 'get', '1001', '--json', 'id', '--ca-file', ca.certPath], withKey(httpsBase('good')));
    expect([result.exitCode, result.stderr]).toEqual([0, '']);
    expect(JSON.parse(result.stdout)).toEqual({ id: 1001 });
  });

  it('through TAXPREP_CA_FILE', async () => {
    const result = await runCli(['accounts', 'get', '1001', '--json', 'id'], withKey(httpsBase('good'), { TAXPREP_CA_FILE: ca.certPath }));
    expect([result.exitCode, result.stderr]).toEqual([0, '']);
  });

  it("through the profile's ca_file", async () => {
    const home = makeHome();
    const added = await runCli(['profiles', 'add', 'firm', '--insecure-storage', '--base-url', httpsBase('good'), '--api-key-stdin', '--ca-file', ca.certPath], { home, input: `${key}\n` });
    expect([added.exitCode, added.stderr]).toEqual([0, expect.any(String)]);
    const path = join(home, '.config', 'taxprep', 'profiles.json');
    const { readFileSync } = await import('node:fs');
    // profiles add keeps the --ca-file it was given (its absolute path) in the profile.
    expect(JSON.parse(readFileSync(path, 'utf8')).profiles.firm.ca_file).toBe(ca.certPath);
    const result = await runCli(['accounts', 'get', '1001', '--json', 'id'], { home });
    expect([result.exitCode, result.stderr]).toEqual([0, '']);
  });

  it('profiles add refuses a --ca-file that is not a PEM file, storing nothing (exit 2)', async () => {
    const home = makeHome();
    const added = await runCli(['profiles', 'add', 'firm', '--insecure-storage', '--base-url', httpsBase('good'), '--api-key-stdin', '--no-verify', '--ca-file', '/etc/hostname'], { home, input: `${key}\n` });
    expect(added.exitCode).toBe(2);
    expect(added.stderr).toContain('the CA file /etc/hostname (--ca-file)');
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(home, '.config', 'taxprep', 'profiles.json'))).toBe(false);
  });

  it('through NODE_EXTRA_CA_CERTS', async () => {
    const result = await runCli(['accounts', 'get', '1001', '--json', 'id'], withKey(httpsBase('good'), { NODE_EXTRA_CA_CERTS: ca.certPath }));
    expect([result.exitCode, result.stderr]).toEqual([0, '']);
  });

  it('not without any of them: the untrusted issuer is named, with the ways on and not the proxy hint (exit 7)', async () => {
    const result = await runCli(['accounts', 'get', '1001'], withKey(httpsBase('good')));
    expect(result.exitCode).toBe(7);
    expect(result.stderr).toContain(`the certificate of https://127.0.0.1:${servers.good!.port} is not trusted: its issuer (CN=Taxprep Test Inspection CA) is in none of the stores taxprep trusts`);
    expect(result.stderr).toContain('CN=localhost, issued by CN=Taxprep Test Inspection CA');
    expect(result.stderr).toContain('update-ca-certificates');
    expect(result.stderr).toContain('--ca-file, TAXPREP_CA_FILE');
    expect(result.stderr).not.toMatch(/HTTPS_PROXY|--use-system-ca/);
  });
});

describe('a CA file that cannot be used is a usage error (exit 2) naming it and its setting', () => {
  it.each([
    ['a missing file', () => join(dir, 'missing.pem'), 'does not exist'],
    ['a file that is not PEM', () => {
      const path = join(dir, 'not-pem.txt');
      writeFileSync(path, 'hello\n');
      return path;
    }, 'holds no PEM certificate'],
    ['a PEM block that does not parse', () => {
      const path = join(dir, 'broken.pem');
      writeFileSync(path, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
      return path;
    }, 'holds a certificate that does not parse (number 1 of 1)'],
  ])('%s', async (_name, make, reason) => {
    const path = make();
    const flag = await runCli(['accounts', 'get', '1001', '--ca-file', path], withKey(httpsBase('good')));
    expect([flag.exitCode, flag.stderr]).toEqual([2, expect.stringContaining(`the CA file ${path} (--ca-file) ${reason}`)]);
    const env = await runCli(['accounts', 'get', '1001'], withKey(httpsBase('good'), { TAXPREP_CA_FILE: path }));
    expect([env.exitCode, env.stderr]).toEqual([2, expect.stringContaining(`the CA file ${path} (TAXPREP_CA_FILE) ${reason}`)]);
  });

  it('the flag wins over the environment', async () => {
    const result = await runCli(['accounts', 'get', '1001', '--json', 'id', '--ca-file', ca.certPath], withKey(httpsBase('good'), { TAXPREP_CA_FILE: join(dir, 'missing.pem') }));
    expect([result.exitCode, result.stderr]).toEqual([0, '']);
  });
});

describe('each cause of failure says which it is, names the certificate, and exits 7', () => {
  const trusted = () => withKey('', { TAXPREP_CA_FILE: ca.certPath });
  const run = (baseUrl: string) => runCli(['accounts', 'get', '1001', '--json'], { env: { ...trusted().env, TAXPREP_BASE_URL: baseUrl } });
  const errorOf = (stderr: string) => JSON.parse(stderr.trim().split('\n').at(-1)!).error as { code: string; message: string; details: { tls: string; certificate?: { subject: string; issuer: string } } };

  it('an issuer in no store', async () => {
    const result = await run(httpsBase('untrusted'));
    expect(result.exitCode).toBe(7);
    expect(errorOf(result.stderr)).toMatchObject({ code: 'TLS_ERROR', details: { tls: 'untrusted', certificate: { subject: 'CN=localhost', issuer: 'CN=Some Other CA' } } });
  });

  it('an expired certificate', async () => {
    const result = await run(httpsBase('expired'));
    expect(result.exitCode).toBe(7);
    const error = errorOf(result.stderr);
    expect(error).toMatchObject({ code: 'TLS_ERROR', details: { tls: 'expired', code: 'CERT_HAS_EXPIRED', certificate: { subject: 'CN=localhost', issuer: 'CN=Taxprep Test Inspection CA' } } });
    expect(error.message).toMatch(/^the certificate of https:\/\/127\.0\.0\.1:\d+ has expired \(valid until \d{4}-/);
  });

  it('a certificate not valid yet', async () => {
    const result = await run(httpsBase('future'));
    expect(result.exitCode).toBe(7);
    expect(errorOf(result.stderr)).toMatchObject({ details: { tls: 'not_yet_valid', code: 'CERT_NOT_YET_VALID' } });
  });

  it('a name that does not match', async () => {
    const result = await run(httpsBase('otherName'));
    expect(result.exitCode).toBe(7);
    const error = errorOf(result.stderr);
    expect(error).toMatchObject({ details: { tls: 'name_mismatch', code: 'ERR_TLS_CERT_ALTNAME_INVALID', certificate: { subject: 'CN=api.example.com' } } });
    expect(error.message).toContain('is for another name (DNS:api.example.com)');
  });

  it('a self-signed certificate', async () => {
    const result = await runCli(['accounts', 'get', '1001'], withKey(httpsBase('selfSigned')));
    expect(result.exitCode).toBe(7);
    expect(result.stderr).toContain('is self-signed, and taxprep does not trust it');
    expect(result.stderr).toContain('CN=localhost, issued by CN=localhost');
    expect(result.stderr).not.toMatch(/HTTPS_PROXY|--use-system-ca/);
  });

  it('https:// to a plain HTTP port', async () => {
    const result = await runCli(['accounts', 'get', '1001'], withKey(`https://127.0.0.1:${mockPort}/v1beta`));
    expect(result.exitCode).toBe(7);
    expect(result.stderr).toContain(`https://127.0.0.1:${mockPort} does not speak TLS: the port answered in plain HTTP, not https`);
    expect(result.stderr).not.toMatch(/HTTPS_PROXY|--use-system-ca/);
  });

  it('http:// to a TLS port', async () => {
    const port = servers.good!.port;
    const result = await runCli(['accounts', 'get', '1001'], withKey(`http://127.0.0.1:${port}/v1beta`, { TAXPREP_CA_FILE: ca.certPath }));
    expect(result.exitCode).toBe(7);
    expect(result.stderr).toContain(`http://127.0.0.1:${port} speaks TLS: the port expects https://, not http://`);
    expect(result.stderr).toContain('CN=localhost, issued by CN=Taxprep Test Inspection CA');
    expect(result.stderr).not.toMatch(/HTTPS_PROXY/);
  });
});

describe('webhook deliveries trust the same stores', () => {
  it('hooks test: delivered to an https receiver whose CA is in the CA file; not delivered without it, saying why (exit 7)', async () => {
    const received: string[] = [];
    const plain = createServer((request, response) => {
      received.push(request.url ?? '');
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const front = await startTlsForwarder(issue(dir, ca, { commonName: 'localhost', names: ['IP:127.0.0.1'] }), (plain.address() as AddressInfo).port);
    try {
      const home = makeHome();
      const env = { ...withKey(mock.baseUrl).env };
      const added = await runCli(['hooks', 'add', `https://127.0.0.1:${front.port}/in`, '--insecure-storage', '--json'], { home, env });
      expect(added.exitCode, added.stderr).toBe(0);
      const { id } = JSON.parse(added.stdout) as { id: string };
      const refused = await runCli(['hooks', 'test', id], { home, env });
      expect(refused.exitCode).toBe(7);
      expect(refused.stderr).toContain("the receiver's certificate is not trusted (its issuer is in none of the stores taxprep trusts) (UNABLE_TO_VERIFY_LEAF_SIGNATURE)");
      expect(received).toEqual([]);
      const delivered = await runCli(['hooks', 'test', id], { home, env: { ...env, TAXPREP_CA_FILE: ca.certPath } });
      expect([delivered.exitCode, delivered.stderr]).toEqual([0, expect.stringContaining('Delivered: taxprep.ping')]);
      expect(received).toEqual(['/in']);
    } finally {
      await front.close();
      plain.close();
    }
  });
});

describe('doctor', () => {
  const checksOf = (stdout: string) => (JSON.parse(stdout) as { checks: Array<{ group: string; name: string; status: string; detail: string }> }).checks.filter((check) => check.group === 'tls');

  it('shows the chain it saw and the store that trusted it', async () => {
    const result = await runCli(['doctor', '--json'], withKey(httpsBase('good'), { TAXPREP_CA_FILE: ca.certPath }));
    expect(result.exitCode).toBe(0);
    const checks = checksOf(result.stdout);
    expect(checks.find((check) => check.name === 'certificate 1')?.detail).toMatch(/^CN=localhost, issued by CN=Taxprep Test Inspection CA; valid \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d; names DNS:localhost, IP Address:127\.0\.0\.1$/);
    expect(checks.find((check) => check.name === 'trusted by')).toMatchObject({ status: 'ok', detail: `the CA file ${ca.certPath} (TAXPREP_CA_FILE), through CN=Taxprep Test Inspection CA` });
    expect(checks.find((check) => check.name === 'CA file')?.detail).toBe(`1 certificates: the CA file ${ca.certPath} (TAXPREP_CA_FILE)`);
  });

  it('names NODE_EXTRA_CA_CERTS when that is what trusted it', async () => {
    const result = await runCli(['doctor', '--json'], withKey(httpsBase('good'), { NODE_EXTRA_CA_CERTS: ca.certPath }));
    expect(checksOf(result.stdout).find((check) => check.name === 'trusted by')?.detail).toBe(`NODE_EXTRA_CA_CERTS (${ca.certPath}), through CN=Taxprep Test Inspection CA`);
  });

  it('an untrusted chain fails with exit 7, the chain still shown', async () => {
    const result = await runCli(['doctor', '--json'], withKey(httpsBase('untrusted')));
    expect(result.exitCode).toBe(7);
    const checks = checksOf(result.stdout);
    expect(checks.find((check) => check.name === 'certificate 1')?.detail).toContain('CN=localhost, issued by CN=Some Other CA');
    expect(checks.find((check) => check.name === 'trusted by')).toMatchObject({ status: 'fail', detail: 'none: UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });
});
