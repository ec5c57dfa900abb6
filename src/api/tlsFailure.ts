import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { NetworkError } from '../errors';
import { sanitizeLine } from '../output/sanitize';
import { codeInCauses } from './errors';
import type { Trust, TrustStore } from './trust';

/** Why a TLS connection failed, in the user's terms. */
export type TlsCause = 'untrusted' | 'expired' | 'not_yet_valid' | 'name_mismatch' | 'self_signed' | 'not_tls' | 'tls_port';

const CAUSE_BY_CODE: Record<string, TlsCause> = {
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'untrusted',
  UNABLE_TO_GET_ISSUER_CERT: 'untrusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'untrusted',
  CERT_UNTRUSTED: 'untrusted',
  CERT_HAS_EXPIRED: 'expired',
  CERT_NOT_YET_VALID: 'not_yet_valid',
  ERR_TLS_CERT_ALTNAME_INVALID: 'name_mismatch',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self_signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'self_signed',
  ERR_SSL_WRONG_VERSION_NUMBER: 'not_tls',
  ERR_SSL_PACKET_LENGTH_TOO_LONG: 'not_tls',
  ERR_SSL_HTTP_REQUEST: 'not_tls',
};

/** Each cause in a few words, for a line that has no room for the certificate (a webhook delivery's outcome). */
export const TLS_CAUSE_WORDS: Record<TlsCause, string> = {
  untrusted: "the receiver's certificate is not trusted (its issuer is in none of the stores taxprep trusts)",
  self_signed: "the receiver's certificate is self-signed, or signed by a self-signed root, and not trusted",
  expired: "the receiver's certificate has expired",
  not_yet_valid: "the receiver's certificate is not valid yet",
  name_mismatch: "the receiver's certificate is for another name",
  not_tls: 'the receiver does not speak TLS on this port (use http://)',
  tls_port: 'the receiver speaks TLS on this port (use https://)',
};

/** OpenSSL's words when the other end answered a handshake with plain HTTP (Node 20 may report only EPROTO). */
const PLAIN_HTTP_ANSWER = /wrong version number|packet length too long|http request/i;

/** The TLS cause of a failed connection, by the code Node or OpenSSL gave it; undefined when it is not one. */
export function tlsCauseOf(error: unknown): { cause: TlsCause; code: string } | undefined {
  const found = codeInCauses(error, (code) => Object.hasOwn(CAUSE_BY_CODE, code) || (code === 'EPROTO'));
  if (found === undefined) return undefined;
  if (found.code === 'EPROTO') return PLAIN_HTTP_ANSWER.test(found.message) ? { cause: 'not_tls', code: found.code } : undefined;
  return { cause: CAUSE_BY_CODE[found.code]!, code: found.code };
}

/** One certificate of a chain as a person reads it. */
export interface CertificateFacts {
  subject: string;
  issuer: string;
  validFrom: string;
  validTo: string;
  /** `DNS:api.example.com, IP Address:127.0.0.1`, when it names any. */
  names?: string;
  raw: Buffer;
}

/** What a handshake that verified nothing saw: the chain, and whether (and why not) it is trusted. */
export interface PeerChain {
  chain: CertificateFacts[];
  authorized: boolean;
  /** Node's code for why it is not trusted (`UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `ERR_TLS_CERT_ALTNAME_INVALID`). */
  authorizationError?: string;
}

function distinguishedName(name: Record<string, string | string[]> | undefined): string {
  if (name === undefined) return '(none)';
  const parts = Object.entries(name).map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : value}`);
  return parts.length === 0 ? '(empty)' : sanitizeLine(parts.join(', '));
}

/** Leaf first, as far as the chain goes (a root names itself as its issuer). */
function chainOf(leaf: DetailedPeerCertificate): CertificateFacts[] {
  const chain: CertificateFacts[] = [];
  const seen = new Set<string>();
  for (let cert: DetailedPeerCertificate | undefined = leaf; cert?.raw !== undefined && !seen.has(cert.fingerprint256); cert = cert.issuerCertificate) {
    seen.add(cert.fingerprint256);
    const facts: CertificateFacts = {
      subject: distinguishedName(cert.subject as unknown as Record<string, string>),
      issuer: distinguishedName(cert.issuer as unknown as Record<string, string>),
      validFrom: new Date(cert.valid_from).toISOString(),
      validTo: new Date(cert.valid_to).toISOString(),
      raw: cert.raw,
    };
    if (cert.subjectaltname) facts.names = sanitizeLine(cert.subjectaltname);
    chain.push(facts);
  }
  return chain;
}

const PROBE_TIMEOUT_MS = 5_000;

/**
 * A TLS handshake with `url`'s host that trusts as taxprep does but refuses nothing, to read the
 * certificate chain the server presents (undici's failed connection is gone by the time its error
 * arrives). Sends nothing after the handshake. Undefined when no handshake completes: the port
 * does not speak TLS, or nothing answers in time.
 */
export function readPeerChain(url: URL, trust: Trust, timeoutMs = PROBE_TIMEOUT_MS): Promise<PeerChain | undefined> {
  const tls = process.getBuiltinModule('node:tls');
  const { isIP } = process.getBuiltinModule('node:net');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'http:' ? 80 : 443));
  return new Promise((resolve) => {
    let socket: TLSSocket | undefined;
    const done = (result: PeerChain | undefined) => {
      clearTimeout(timer);
      socket?.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    try {
      socket = tls.connect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}), secureContext: trust.secureContext(), rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    } catch {
      done(undefined);
      return;
    }
    socket.once('secureConnect', () => {
      const result: PeerChain = { chain: chainOf(socket!.getPeerCertificate(true)), authorized: socket!.authorized };
      const reason = socket!.authorizationError as unknown;
      if (reason !== null && reason !== undefined) result.authorizationError = reason instanceof Error ? ((reason as NodeJS.ErrnoException).code ?? reason.message) : String(reason);
      done(result);
    });
    socket.once('error', () => done(undefined));
  });
}

/** `CN=api.example.com, issued by CN=Acme Inspection CA`. */
export function describeCertificate(cert: CertificateFacts): string {
  return `${cert.subject}, issued by ${cert.issuer}`;
}

/** The store that holds the chain's anchor: a certificate of the chain, or the one that issued its last; undefined when none does. */
export function trustingStore(chain: readonly CertificateFacts[], stores: readonly TrustStore[]): { store: TrustStore; anchor: string } | undefined {
  const { X509Certificate } = process.getBuiltinModule('node:crypto');
  const certificates = chain.map((cert) => new X509Certificate(cert.raw));
  for (const store of stores) {
    for (const pem of store.certificates) {
      let ca: InstanceType<typeof X509Certificate>;
      try {
        ca = new X509Certificate(pem);
      } catch {
        continue;
      }
      for (const cert of certificates) {
        if (cert.fingerprint256 === ca.fingerprint256 || (cert.checkIssued(ca) && cert.verify(ca.publicKey))) return { store, anchor: sanitizeLine(ca.subject.replace(/\n/g, ', ')) };
      }
    }
  }
  return undefined;
}

export const CA_FILE_WAYS = "--ca-file, TAXPREP_CA_FILE or the profile's ca_file";
export const TRUST_WAYS = `install your organisation's CA in the system's store (on Debian and Ubuntu: copy it to /usr/local/share/ca-certificates/ and run update-ca-certificates), or name a PEM file of it with ${CA_FILE_WAYS}`;

/** What the failure is, and the way on, for a connection to `origin`; `change` says how to use another address. */
export function tlsAdvice(cause: TlsCause, origin: string, peer: PeerChain | undefined, now: Date, change: string): { message: string; hint: string } {
  const leaf = peer?.chain[0];
  const seen = leaf === undefined ? '' : `The certificate: ${describeCertificate(leaf)}, valid ${leaf.validFrom.slice(0, 10)} to ${leaf.validTo.slice(0, 10)}. `;
  const top = peer?.chain[peer.chain.length - 1];
  switch (cause) {
    case 'untrusted':
      return {
        message: `the certificate of ${origin} is not trusted: its issuer${top === undefined ? '' : ` (${top.issuer})`} is in none of the stores taxprep trusts`,
        hint: `${seen}If your organisation inspects TLS or runs its own CA, ${TRUST_WAYS}. \`taxprep doctor\` shows the chain.`,
      };
    case 'self_signed':
      return {
        message: `the certificate of ${origin} is ${leaf !== undefined && leaf.subject === leaf.issuer ? 'self-signed, and taxprep does not trust it' : 'signed by a self-signed root that taxprep does not trust'}`,
        hint: `${seen}If the server is your organisation's (or a test server), trust it: ${TRUST_WAYS}; otherwise report it to the service operator.`,
      };
    case 'expired':
      return {
        message: `the certificate of ${origin} has expired${leaf === undefined ? '' : ` (valid until ${leaf.validTo})`}`,
        hint: `${seen}This machine's clock reads ${now.toISOString()}: if that is wrong, set it; otherwise the service operator must renew the certificate.`,
      };
    case 'not_yet_valid':
      return {
        message: `the certificate of ${origin} is not valid yet${leaf === undefined ? '' : ` (valid from ${leaf.validFrom})`}`,
        hint: `${seen}This machine's clock reads ${now.toISOString()}: if that is behind, set it (e.g. by network time); otherwise report it to the service operator.`,
      };
    case 'name_mismatch':
      return {
        message: `the certificate of ${origin} is for another name${leaf?.names === undefined ? '' : ` (${leaf.names})`}`,
        hint: `${seen}Use an address with a name the certificate names. ${change}`,
      };
    case 'not_tls':
      return {
        message: `${origin} does not speak TLS: the port answered in plain HTTP, not https`,
        hint: `Use http:// if the service is served without TLS on this port, or the service's https port. ${change}`,
      };
    case 'tls_port':
      return {
        message: `${origin} speaks TLS: the port expects https://, not http://`,
        hint: `${seen}Use https:// for this address. ${change}`,
      };
  }
}

/** A connection that closed, or answered bytes that are not HTTP: what an http:// request to a TLS port meets. */
function closedOrGarbled(error: unknown): boolean {
  return codeInCauses(error, (code) => code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code.startsWith('HPE_')) !== undefined;
}

/**
 * The error for a request to `url` that failed in (or for want of) TLS, with the chain the server
 * presents when a handshake gets that far; undefined when the failure is not about TLS.
 * `change` says how to use another address. Exit 7, as any failed connection.
 */
export async function tlsFailureError(error: unknown, url: URL, trust: Trust, now: Date, change: string): Promise<NetworkError | undefined> {
  let found = tlsCauseOf(error);
  let peer: PeerChain | undefined;
  if (found !== undefined) {
    if (found.cause !== 'not_tls') peer = await readPeerChain(url, trust);
  } else if (url.protocol === 'http:' && closedOrGarbled(error)) {
    peer = await readPeerChain(url, trust);
    if (peer === undefined) return undefined;
    found = { cause: 'tls_port', code: 'TLS_PORT' };
  } else {
    return undefined;
  }
  const { message, hint } = tlsAdvice(found.cause, url.origin, peer, now, change);
  const leaf = peer?.chain[0];
  const details: Record<string, unknown> = { tls: found.cause, code: found.code };
  if (leaf !== undefined) details.certificate = { subject: leaf.subject, issuer: leaf.issuer, valid_from: leaf.validFrom, valid_to: leaf.validTo, ...(leaf.names === undefined ? {} : { names: leaf.names }) };
  return new NetworkError('TLS_ERROR', message, { hint, cause: error, details, mayHaveReachedService: false });
}
