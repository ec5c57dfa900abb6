import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as connectTcp, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';

/**
 * Throwaway certificate authorities and the certificates they sign, made with the `openssl` CLI
 * for each test run (nothing kept in the repository), and TLS servers on 127.0.0.1 that forward
 * to a plain HTTP server (`serve --mock`), as a firm's inspection proxy or a TLS front end would.
 */
export interface Ca {
  /** The CA's certificate, PEM, and the file holding it. */
  cert: string;
  certPath: string;
  keyPath: string;
  subject: string;
}

export interface Issued {
  key: string;
  cert: string;
  certPath: string;
}

/** P-256 keys: made in milliseconds, where RSA keys take a good part of a second each. */
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function tempDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'taxprep-tls-'));
}

/** A CA certificate (self-signed, CA:TRUE) named `CN=<name>`. */
export function makeCa(dir: string, name: string): Ca {
  const base = name.replace(/\W+/g, '-');
  const certPath = join(dir, `${base}.pem`);
  const keyPath = join(dir, `${base}.key`);
  openssl(['req', '-x509', ...EC_KEY, '-nodes', '-days', '30', '-subj', `/CN=${name}`, '-keyout', keyPath, '-out', certPath, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  return { cert: readFileSync(certPath, 'utf8'), certPath, keyPath, subject: `CN=${name}` };
}

let serial = 0;

/**
 * A server certificate for `CN=<commonName>` with `names` as its subject alternative names
 * (`DNS:localhost`, `IP:127.0.0.1`), signed by `ca`, valid between the dates (OpenSSL's
 * `YYYYMMDDHHMMSSZ`; by default from yesterday for 30 days).
 */
export function issue(dir: string, ca: Ca, options: { commonName: string; names: string[]; startDate?: string; endDate?: string }): Issued {
  serial += 1;
  const base = `${options.commonName.replace(/\W+/g, '-')}-${serial}`;
  const keyPath = join(dir, `${base}.key`);
  const csrPath = join(dir, `${base}.csr`);
  const certPath = join(dir, `${base}.pem`);
  openssl(['req', ...EC_KEY, '-nodes', '-subj', `/CN=${options.commonName}`, '-keyout', keyPath, '-out', csrPath], dir);
  writeFileSync(join(dir, `${base}.ext`), `subjectAltName=${options.names.join(',')}\nbasicConstraints=CA:FALSE\n`);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), `${(0x1000 + serial).toString(16)}\n`);
  const day = 24 * 3600 * 1000;
  const stamp = (ms: number) => `${new Date(ms).toISOString().replace(/[-:T]|\.\d+/g, '')}`;
  writeFileSync(
    join(dir, 'ca.cnf'),
    ['[ca]', 'default_ca = d', '[d]', `database = ${join(dir, 'index.txt')}`, `new_certs_dir = ${dir}`, `serial = ${join(dir, 'serial')}`, 'default_md = sha256', 'policy = p', 'unique_subject = no', '[p]', 'commonName = supplied', ''].join('\n'),
  );
  openssl(
    ['ca', '-batch', '-notext', '-config', join(dir, 'ca.cnf'), '-cert', ca.certPath, '-keyfile', ca.keyPath, '-in', csrPath, '-out', certPath, '-extfile', join(dir, `${base}.ext`), '-startdate', options.startDate ?? stamp(Date.now() - day), '-enddate', options.endDate ?? stamp(Date.now() + 30 * day)],
    dir,
  );
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}

/** A self-signed server certificate (no CA): `CN=<commonName>`. */
export function selfSignedCertificate(dir: string, commonName: string, names: string[]): Issued {
  const base = `self-${commonName.replace(/\W+/g, '-')}`;
  const keyPath = join(dir, `${base}.key`);
  const certPath = join(dir, `${base}.pem`);
  openssl(['req', '-x509', ...EC_KEY, '-nodes', '-days', '30', '-subj', `/CN=${commonName}`, '-keyout', keyPath, '-out', certPath, '-addext', `subjectAltName=${names.join(',')}`], dir);
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}

export interface TlsForwarder {
  port: number;
  close(): Promise<void>;
}

/** A TLS server on 127.0.0.1 presenting `issued`'s certificate, each connection forwarded to `targetPort` in plain TCP. */
export async function startTlsForwarder(issued: Issued, targetPort: number): Promise<TlsForwarder> {
  const open = new Set<{ destroy(): void }>();
  const server = createTlsServer({ key: issued.key, cert: issued.cert }, (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    const upstream = connectTcp(targetPort, '127.0.0.1');
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  // A client that speaks plain HTTP to it fails its handshake: the server closes, as an https port does.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
