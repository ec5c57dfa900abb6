import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pemCertificates, readCaFile } from '../../src/config/caFile';
import { createTrust, systemStoreOf, unixSystemStore } from '../../src/api/trust';
import { SELF_SIGNED_CERT } from '../helpers/selfSigned';

const CERT = SELF_SIGNED_CERT.trim();
const OTHER = CERT.replace('MIIDCzCC', 'MIIDCzCD');

function directory(): string {
  return mkdtempSync(join(tmpdir(), 'taxprep-trust-'));
}

describe("the system's store on Linux, read as OpenSSL's defaults are", () => {
  it('the first bundle file that holds certificates, and no directory then', () => {
    const dir = directory();
    writeFileSync(join(dir, 'empty.crt'), 'nothing here\n');
    writeFileSync(join(dir, 'bundle.crt'), `${CERT}\n${OTHER}\n`);
    writeFileSync(join(dir, 'later.crt'), `${CERT}\n`);
    mkdirSync(join(dir, 'certs'));
    writeFileSync(join(dir, 'certs', 'one.pem'), CERT);
    const files = [join(dir, 'missing.crt'), join(dir, 'empty.crt'), join(dir, 'bundle.crt'), join(dir, 'later.crt')];
    expect(unixSystemStore({}, files, [join(dir, 'certs')])).toEqual({ certificates: [CERT, OTHER], where: join(dir, 'bundle.crt') });
  });

  it('the directories when no bundle file exists', () => {
    const dir = directory();
    mkdirSync(join(dir, 'certs'));
    writeFileSync(join(dir, 'certs', 'one.pem'), CERT);
    writeFileSync(join(dir, 'certs', 'README'), 'not a certificate');
    expect(unixSystemStore({}, [join(dir, 'missing.crt')], [join(dir, 'nowhere'), join(dir, 'certs')])).toEqual({ certificates: [CERT], where: join(dir, 'certs') });
  });

  it('SSL_CERT_FILE and SSL_CERT_DIR replace the usual places', () => {
    const dir = directory();
    writeFileSync(join(dir, 'usual.crt'), CERT);
    writeFileSync(join(dir, 'mine.crt'), OTHER);
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    writeFileSync(join(dir, 'b', 'x.pem'), CERT);
    const usual = [join(dir, 'usual.crt')];
    expect(unixSystemStore({ SSL_CERT_FILE: join(dir, 'mine.crt') }, usual, [])).toEqual({ certificates: [OTHER], where: join(dir, 'mine.crt') });
    expect(unixSystemStore({ SSL_CERT_DIR: `${join(dir, 'a')}:${join(dir, 'b')}` }, usual, [])).toEqual({ certificates: [CERT], where: join(dir, 'b') });
    expect(unixSystemStore({ SSL_CERT_FILE: join(dir, 'mine.crt'), SSL_CERT_DIR: join(dir, 'b') }, usual, [])).toEqual({ certificates: [OTHER, CERT], where: `${join(dir, 'mine.crt')}, ${join(dir, 'b')}` });
    // The same certificate in the bundle and the directory (as on Debian) counts once, however it is wrapped.
    writeFileSync(join(dir, 'b', 'y.pem'), `${OTHER.replace(/\n/g, '\r\n')}\n`);
    expect(unixSystemStore({ SSL_CERT_FILE: join(dir, 'mine.crt'), SSL_CERT_DIR: join(dir, 'b') }, usual, [])).toEqual({ certificates: [OTHER, CERT], where: `${join(dir, 'mine.crt')}, ${join(dir, 'b')}` });
  });

  it('none found is said, naming where it looked', () => {
    const dir = directory();
    expect(unixSystemStore({}, [join(dir, 'a.crt')], [join(dir, 'd')])).toEqual({ unavailable: `no certificates found in ${join(dir, 'a.crt')}, ${join(dir, 'd')}` });
    expect(unixSystemStore({ SSL_CERT_FILE: join(dir, 'x.crt') })).toEqual({ unavailable: `no certificates found in ${join(dir, 'x.crt')}` });
  });

  it('on macOS and Windows only the runtime reads it: a runtime without tls.getCACertificates says so', () => {
    const tls = process.getBuiltinModule('node:tls');
    const without = { ...tls, getCACertificates: undefined } as unknown as typeof tls;
    expect(systemStoreOf(without, {}, 'darwin')).toEqual({ unavailable: `Node.js ${process.version} cannot read the macOS keychain (Node.js 22.15 or later can)` });
    expect(systemStoreOf(without, {}, 'win32')).toEqual({ unavailable: `Node.js ${process.version} cannot read the Windows certificate store (Node.js 22.15 or later can)` });
    const withCall = { ...tls, getCACertificates: (type: string) => (type === 'system' ? [CERT] : []) } as unknown as typeof tls;
    expect(systemStoreOf(withCall, {}, 'darwin')).toEqual({ certificates: [CERT], where: 'the macOS keychain' });
  });
});

describe('the stores every connection trusts', () => {
  it("Node's bundled roots, the system's store, the CA file and NODE_EXTRA_CA_CERTS, in that order", () => {
    const dir = directory();
    writeFileSync(join(dir, 'extra.pem'), OTHER);
    writeFileSync(join(dir, 'ca.pem'), CERT);
    const trust = createTrust({ caFile: readCaFile(join(dir, 'ca.pem'), '--ca-file'), env: { NODE_EXTRA_CA_CERTS: join(dir, 'extra.pem'), SSL_CERT_FILE: join(dir, 'ca.pem') } });
    const stores = trust.stores();
    expect(stores.map((store) => [store.name, store.label, store.certificates.length])).toEqual([
      ['bundled', `Node.js's bundled roots (${process.version})`, process.getBuiltinModule('node:tls').rootCertificates.length],
      ['system', `the system store (${join(dir, 'ca.pem')})`, 1],
      ['ca_file', `the CA file ${join(dir, 'ca.pem')} (--ca-file)`, 1],
      ['NODE_EXTRA_CA_CERTS', `NODE_EXTRA_CA_CERTS (${join(dir, 'extra.pem')})`, 1],
    ]);
    expect(trust.secureContext()).toBe(trust.secureContext());
  });

  it('no CA file and no NODE_EXTRA_CA_CERTS: the bundled roots and the system store only', () => {
    const dir = directory();
    writeFileSync(join(dir, 'system.pem'), CERT);
    expect(createTrust({ caFile: undefined, env: { SSL_CERT_FILE: join(dir, 'system.pem') } }).stores().map((store) => store.name)).toEqual(['bundled', 'system']);
  });
});

describe('the CA file', () => {
  it('its PEM certificates, other blocks skipped', () => {
    expect(pemCertificates(`text\n${CERT}\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n${OTHER}`)).toEqual([CERT, OTHER]);
  });

  it('unreadable: the reason, the file and the setting', () => {
    const dir = directory();
    expect(() => readCaFile(dir, 'TAXPREP_CA_FILE')).toThrow(`the CA file ${dir} (TAXPREP_CA_FILE) cannot be read (EISDIR)`);
  });
});
