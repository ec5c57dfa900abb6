import { describe, expect, it } from 'vitest';
import { tlsAdvice, tlsCauseOf, type PeerChain } from '../../src/api/tlsFailure';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('the cause of a TLS failure, by the code Node or OpenSSL gave it', () => {
  it.each([
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'untrusted'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'untrusted'],
    ['CERT_HAS_EXPIRED', 'expired'],
    ['CERT_NOT_YET_VALID', 'not_yet_valid'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'name_mismatch'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self_signed'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'self_signed'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'not_tls'],
    ['ERR_SSL_PACKET_LENGTH_TOO_LONG', 'not_tls'],
  ])('%s is %s, found among the causes', (code, cause) => {
    expect(tlsCauseOf(new Error('fetch failed', { cause: coded(code) }))).toEqual({ cause, code });
  });

  it('EPROTO is a plain-HTTP answer only when OpenSSL says so', () => {
    expect(tlsCauseOf(coded('EPROTO', 'routines:ssl3_get_record:wrong version number'))).toEqual({ cause: 'not_tls', code: 'EPROTO' });
    expect(tlsCauseOf(coded('EPROTO', 'unsupported protocol'))).toBeUndefined();
  });

  it('other failures are not TLS ones', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ENOTFOUND']) expect(tlsCauseOf(coded(code))).toBeUndefined();
  });
});

describe('the advice of each cause', () => {
  const cert = { subject: 'CN=api.example.com', issuer: 'CN=Acme Inspection CA', validFrom: '2026-01-01T00:00:00.000Z', validTo: '2026-06-30T00:00:00.000Z', names: 'DNS:api.example.com', raw: Buffer.alloc(0) };
  const peer: PeerChain = { chain: [cert], authorized: false };
  const now = new Date('2026-11-28T10:00:00.000Z');
  const advice = (cause: Parameters<typeof tlsAdvice>[0], seen: PeerChain | undefined = peer) => tlsAdvice(cause, 'https://api.example.com', seen, now, 'CHANGE.');
  const unread = (cause: Parameters<typeof tlsAdvice>[0]) => tlsAdvice(cause, 'https://api.example.com', undefined, now, 'CHANGE.');

  it('names the certificate, and the ways on; never the proxy hint', () => {
    const all = (['untrusted', 'self_signed', 'expired', 'not_yet_valid', 'name_mismatch', 'tls_port'] as const).map((cause) => advice(cause));
    for (const { hint } of all) {
      expect(hint).toContain('The certificate: CN=api.example.com, issued by CN=Acme Inspection CA, valid 2026-01-01 to 2026-06-30. ');
      expect(hint).not.toMatch(/PROXY/);
    }
  });

  it('each says which it is', () => {
    expect(advice('untrusted')).toMatchObject({ message: 'the certificate of https://api.example.com is not trusted: its issuer (CN=Acme Inspection CA) is in none of the stores taxprep trusts', hint: expect.stringContaining('update-ca-certificates') });
    expect(advice('untrusted').hint).toContain("--ca-file, TAXPREP_CA_FILE or the profile's ca_file");
    expect(advice('self_signed', { chain: [{ ...cert, issuer: cert.subject }], authorized: false }).message).toBe('the certificate of https://api.example.com is self-signed, and taxprep does not trust it');
    expect(advice('self_signed').message).toBe('the certificate of https://api.example.com is signed by a self-signed root that taxprep does not trust');
    expect(advice('expired')).toMatchObject({ message: 'the certificate of https://api.example.com has expired (valid until 2026-06-30T00:00:00.000Z)', hint: expect.stringContaining("This machine's clock reads 2026-11-28T10:00:00.000Z") });
    expect(advice('not_yet_valid').message).toBe('the certificate of https://api.example.com is not valid yet (valid from 2026-01-01T00:00:00.000Z)');
    expect(advice('name_mismatch')).toMatchObject({ message: 'the certificate of https://api.example.com is for another name (DNS:api.example.com)', hint: expect.stringMatching(/names\. CHANGE\.$/) });
    expect(unread('not_tls')).toEqual({ message: 'https://api.example.com does not speak TLS: the port answered in plain HTTP, not https', hint: "Use http:// if the service is served without TLS on this port, or the service's https port. CHANGE." });
    expect(advice('tls_port').message).toBe('https://api.example.com speaks TLS: the port expects https://, not http://');
  });

  it('without a chain read, the message still says which it is', () => {
    expect(unread('untrusted').message).toBe('the certificate of https://api.example.com is not trusted: its issuer is in none of the stores taxprep trusts');
    expect(unread('expired').message).toBe('the certificate of https://api.example.com has expired');
  });
});
