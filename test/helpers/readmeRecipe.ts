import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/**
 * The README's renewal recipe (`/usr/local/bin/taxprep-renew`), word for word but for the two paths
 * a machine chooses: how taxprep is run (`taxprep`) and the clients file. Undefined when the
 * README no longer holds it.
 */
export function renewalRecipe(taxprep: string, clients: string): string | undefined {
  const readme = readFileSync(README, 'utf8');
  const script = /```sh\n(#!\/bin\/sh\n# \/usr\/local\/bin\/taxprep-renew:[\s\S]*?)```/.exec(readme)?.[1];
  return script?.replace('/usr/local/bin/taxprep ', `${taxprep} `).replace('/srv/taxprep/clients.csv', clients);
}
