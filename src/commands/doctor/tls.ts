import { CA_FILE_WAYS, readPeerChain, trustingStore, TRUST_WAYS, type PeerChain } from '../../api/tlsFailure';
import type { Trust } from '../../api/trust';
import { EXIT } from '../../errors';
import { fail, ok, skip, warn, type Check } from './checks';
import { proxyInEffect } from './proxy';

type Env = Record<string, string | undefined>;

/** The stores taxprep trusts (no request): how many certificates each holds and where from; a system store this runtime cannot read is a warning. */
export function trustStoreChecks(trust: Trust): Check[] {
  const system = trust.systemStore();
  const checks = trust.stores().map((store) => ok('tls', store.name === 'ca_file' ? 'CA file' : store.name === 'system' ? 'system store' : store.name === 'bundled' ? 'bundled roots' : store.name, `${store.certificates.length} certificates: ${store.label}`));
  if ('unavailable' in system) checks.push(warn('tls', 'system store', system.unavailable, `Certificates your organisation installed in the system's store are not trusted here: name a PEM file of its CA with ${CA_FILE_WAYS}.`));
  return checks;
}

const day = (iso: string) => iso.slice(0, 10);

/**
 * The chain the service presents, a certificate a line (subject, issuer, validity), and the store
 * that trusted it: read by a handshake of its own, which sends no request (not counted in the
 * budget). Only for an https base URL reached directly: through a proxy the chain seen would be
 * the proxy's business.
 */
export async function chainChecks(trust: Trust, baseUrl: string, env: Env, read: (url: URL, trust: Trust) => Promise<PeerChain | undefined> = readPeerChain): Promise<Check[]> {
  const url = new URL(baseUrl);
  if (url.protocol !== 'https:') return [];
  const proxy = proxyInEffect(baseUrl, env);
  if (proxy.proxy !== undefined) return [skip('tls', 'chain', `not read: requests go through the proxy ${proxy.proxy}`)];
  const peer = await read(url, trust);
  if (peer === undefined) return [skip('tls', 'chain', `no TLS handshake with ${url.host} completed`)];
  const checks = peer.chain.map((cert, index) =>
    ok('tls', `certificate ${index + 1}`, `${cert.subject}, issued by ${cert.issuer}; valid ${day(cert.validFrom)} to ${day(cert.validTo)}${cert.names === undefined || index > 0 ? '' : `; names ${cert.names}`}`),
  );
  if (!peer.authorized) {
    checks.push(fail('tls', 'trusted by', `none: ${peer.authorizationError ?? 'not trusted'}`, `If your organisation inspects TLS or runs its own CA, ${TRUST_WAYS}.`, EXIT.NETWORK));
    return checks;
  }
  const trusted = trustingStore(peer.chain, trust.stores());
  checks.push(trusted === undefined ? ok('tls', 'trusted by', 'the runtime (no store of taxprep holds the anchor)') : ok('tls', 'trusted by', `${trusted.store.label}, through ${trusted.anchor}`));
  return checks;
}
