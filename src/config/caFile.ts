import { readFileSync } from 'node:fs';
import { UsageError } from '../errors';

/** A CA file the user named, the setting that named it (`--ca-file`, TAXPREP_CA_FILE, `ca_file of profile "acme"`), and its certificates. */
export interface CaFile {
  path: string;
  where: string;
  certificates: readonly string[];
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle (other blocks, such as keys or text between them, are skipped). */
export function pemCertificates(text: string): string[] {
  return text.match(PEM_CERTIFICATE) ?? [];
}

/** A PEM certificate's base64 alone: the same certificate from two bundles, wrapped or labelled differently, compares equal. */
export function certificateBody(pem: string): string {
  return pem.replace(/-----[^-]+-----|\s/g, '');
}

const CA_FILE_RULE = 'must be a readable file of PEM certificates ("-----BEGIN CERTIFICATE-----")';
const CA_FILE_HINT = "Name a file of PEM certificates (the CA that signs the service's certificate, as your IT department hands it out), or unset the setting.";

/**
 * The CA file's certificates, read when the settings are resolved, so that a wrong file is a usage
 * error on any command (naming it and the setting it came from) rather than a failed connection
 * later: missing, unreadable, holding no PEM certificate or one that does not parse.
 */
export function readCaFile(path: string, where: string): CaFile {
  const refuse = (reason: string) => new UsageError(`the CA file ${path} (${where}) ${reason}`, { details: { ca_file: [CA_FILE_RULE] }, hint: CA_FILE_HINT });
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw refuse(code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`);
  }
  const certificates = pemCertificates(text);
  if (certificates.length === 0) throw refuse('holds no PEM certificate');
  const { X509Certificate } = process.getBuiltinModule('node:crypto');
  certificates.forEach((certificate, index) => {
    try {
      new X509Certificate(certificate);
    } catch {
      throw refuse(`holds a certificate that does not parse (number ${index + 1} of ${certificates.length})`);
    }
  });
  return { path, where, certificates };
}

