import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const GUIDE = fileURLToPath(new URL('../../docs/cron.md', import.meta.url));

/**
 * The renewal recipe of docs/cron.md (`/usr/local/bin/taxprep-renew`), word for word but for the
 * two paths a machine chooses: how taxprep is run (`taxprep`) and the clients file. Undefined when
 * the guide no longer holds it.
 */
export function renewalRecipe(taxprep: string, clients: string): string | undefined {
  const guide = readFileSync(GUIDE, 'utf8');
  const script = /```sh\n(#!\/bin\/sh\n# \/usr\/local\/bin\/taxprep-renew:[\s\S]*?)```/.exec(guide)?.[1];
  return script?.replace('/usr/local/bin/taxprep ', `${taxprep} `).replace('/srv/taxprep/clients.csv', clients);
}
