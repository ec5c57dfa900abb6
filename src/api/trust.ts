import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SecureContext } from 'node:tls';
import { certificateBody, pemCertificates, type CaFile } from '../config/caFile';

type Env = Record<string, string | undefined>;
type Tls = typeof import('node:tls');

/** The certificate authorities taxprep trusts come from these stores, in this order. */
export type TrustStoreName = 'bundled' | 'system' | 'ca_file' | 'NODE_EXTRA_CA_CERTS';

export interface TrustStore {
  name: TrustStoreName;
  /** In words, with where it was read from: `the system store (/etc/ssl/certs/ca-certificates.crt)`. */
  label: string;
  certificates: readonly string[];
}

/** The system's store as this runtime can read it, or why it cannot. */
export type SystemStore = { certificates: readonly string[]; where: string } | { unavailable: string };

/**
 * Trust for every TLS connection taxprep makes (API calls, webhook deliveries, doctor): Node's
 * bundled roots, the system's store, the CA file and NODE_EXTRA_CA_CERTS, the stores listed apart
 * so that doctor can say which one vouched for a chain. Nothing is read until the first TLS
 * connection asks: commands that make none pay nothing.
 */
export interface Trust {
  readonly caFile: CaFile | undefined;
  stores(): readonly TrustStore[];
  systemStore(): SystemStore;
  /** One context for every connection (making one costs about 20 ms of CPU: too much per connection). */
  secureContext(): SecureContext;
}

/**
 * Where OpenSSL, and Go's crypto/x509 (root_linux.go), look for the system's bundle on Linux and
 * other Unix systems: the first of these files that exists, unless SSL_CERT_FILE names another.
 */
export const SYSTEM_BUNDLE_FILES = [
  '/etc/ssl/certs/ca-certificates.crt', // Debian, Ubuntu, Gentoo, Arch
  '/etc/pki/tls/certs/ca-bundle.crt', // Fedora, RHEL 6
  '/etc/ssl/ca-bundle.pem', // openSUSE
  '/etc/pki/tls/cacert.pem', // OpenELEC
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem', // CentOS, RHEL 7
  '/etc/ssl/cert.pem', // Alpine, FreeBSD, OpenBSD
];
/** Read only when no bundle file exists (on Debian they hold the same certificates as the bundle, one file each). */
export const SYSTEM_CERT_DIRECTORIES = ['/etc/ssl/certs', '/etc/pki/tls/certs'];

function readable(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
}

function directoryCertificates(directory: string): string[] {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return [];
  }
  return names.flatMap((name) => pemCertificates(readable(join(directory, name)) ?? ''));
}

/**
 * The system's store on Linux and other Unix systems, read as OpenSSL's defaults are: SSL_CERT_FILE
 * and SSL_CERT_DIR (colon-separated) when set, else the first bundle file found, else the
 * certificate directories. Read directly rather than by Node's `tls.getCACertificates('system')`
 * (Node 22.15 and later): the same files, but Node reads the directory's 300 files as well as the
 * bundle (about 50 ms against 1 ms here), and Node 20 has no such call.
 */
export function unixSystemStore(env: Env, files = SYSTEM_BUNDLE_FILES, directories = SYSTEM_CERT_DIRECTORIES): SystemStore {
  const fileOverride = env.SSL_CERT_FILE || undefined;
  const directoryOverride = env.SSL_CERT_DIR ? env.SSL_CERT_DIR.split(':').filter((directory) => directory !== '') : undefined;
  const certificates: string[] = [];
  const where: string[] = [];
  const candidates = fileOverride !== undefined ? [fileOverride] : directoryOverride !== undefined ? [] : files;
  for (const file of candidates) {
    const found = pemCertificates(readable(file) ?? '');
    if (found.length === 0) continue;
    certificates.push(...found);
    where.push(file);
    break;
  }
  for (const directory of directoryOverride ?? (certificates.length === 0 && fileOverride === undefined ? directories : [])) {
    const found = directoryCertificates(directory);
    if (found.length === 0) continue;
    certificates.push(...found);
    where.push(directory);
  }
  if (certificates.length === 0) {
    const looked = fileOverride ?? directoryOverride?.join(':') ?? [...files, ...directories].join(', ');
    return { unavailable: `no certificates found in ${looked}` };
  }
  // A bundle and the directory beside it (SSL_CERT_FILE and SSL_CERT_DIR both set) hold the same certificates.
  const unique = new Map<string, string>();
  for (const pem of certificates) if (!unique.has(certificateBody(pem))) unique.set(certificateBody(pem), pem);
  return { certificates: [...unique.values()], where: where.join(', ') };
}

/** The system's store on macOS and Windows: only the runtime can read it (Node 22.15, 23.8 and later). */
function runtimeSystemStore(tls: Tls, platform: string): SystemStore {
  const getCACertificates = (tls as Tls & { getCACertificates?: (type: string) => string[] }).getCACertificates;
  const name = platform === 'darwin' ? 'the macOS keychain' : 'the Windows certificate store';
  if (getCACertificates === undefined) {
    return { unavailable: `Node.js ${process.version} cannot read ${name} (Node.js 22.15 or later can)` };
  }
  return { certificates: getCACertificates('system'), where: name };
}

export function systemStoreOf(tls: Tls, env: Env, platform: string = process.platform): SystemStore {
  return platform === 'darwin' || platform === 'win32' ? runtimeSystemStore(tls, platform) : unixSystemStore(env);
}

/** NODE_EXTRA_CA_CERTS as Node reads it at start-up (a missing file is Node's warning, not ours). */
function extraCertificates(env: Env): string[] {
  const path = env.NODE_EXTRA_CA_CERTS;
  return path ? pemCertificates(readable(path) ?? '') : [];
}

export function createTrust(options: { caFile: CaFile | undefined; env: Env }): Trust {
  // node:tls too is loaded on the first https connection (undici loads it only then as well).
  const tls = () => process.getBuiltinModule('node:tls');
  let system: SystemStore | undefined;
  let stores: TrustStore[] | undefined;
  let context: SecureContext | undefined;
  const trust: Trust = {
    caFile: options.caFile,
    systemStore: () => (system ??= systemStoreOf(tls(), options.env)),
    stores() {
      if (stores !== undefined) return stores;
      const systemStore = trust.systemStore();
      stores = [{ name: 'bundled', label: `Node.js's bundled roots (${process.version})`, certificates: tls().rootCertificates }];
      if ('certificates' in systemStore) stores.push({ name: 'system', label: `the system store (${systemStore.where})`, certificates: systemStore.certificates });
      if (options.caFile !== undefined) stores.push({ name: 'ca_file', label: `the CA file ${options.caFile.path} (${options.caFile.where})`, certificates: options.caFile.certificates });
      const extra = extraCertificates(options.env);
      if (extra.length > 0) stores.push({ name: 'NODE_EXTRA_CA_CERTS', label: `NODE_EXTRA_CA_CERTS (${options.env.NODE_EXTRA_CA_CERTS})`, certificates: extra });
      return stores;
    },
    secureContext() {
      if (context !== undefined) return context;
      // Node's default context (its bundled roots, parsed once per process, and NODE_EXTRA_CA_CERTS as
      // Node read it), with the certificates it lacks added one by one: 20 ms here, where the same
      // certificates given as `ca` (which replaces the defaults) took 100-300 ms to parse.
      const bundled = new Set(tls().rootCertificates.map(certificateBody));
      const lacking = new Set(trust.stores().flatMap((store) => (store.name === 'bundled' ? [] : store.certificates.filter((pem) => !bundled.has(certificateBody(pem))))));
      context = tls().createSecureContext();
      const handle = (context as SecureContext & { context: { addCACert(pem: string): void } }).context;
      for (const pem of lacking) handle.addCACert(pem);
      return context;
    },
  };
  return trust;
}
