import { generateSecret } from '../../hooks/sign';
import { createOutput } from '../../output';
import type { Context } from '../../types';
import type { RawInvocation } from '../types';
import { editHook, hookIdArgument, scopedHooks } from './view';
import { findHook, hookSecretsAccount, secretsOf, type HookSecret } from '../../hooks/store';
import { CredentialStoreUnavailable } from '../../config/credentialStore';
import { MissingCredentialsError } from '../../errors';

/** Both secrets sign every delivery this long after a rotation, so the receiver can switch without losing one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export function parseOptions(raw: RawInvocation): { id: string } {
  return { id: hookIdArgument(raw.args[0]) };
}

/** `taxprep hooks rotate-secret`: a new secret, printed this once; the old one keeps signing for 24 hours. */
export async function run(ctx: Context, options: { id: string }): Promise<number> {
  const now = ctx.clock.now();
  const secret = generateSecret();
  const expires = new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString();
  const rotated = (secrets: HookSecret[]): HookSecret[] => {
    const live = secrets.filter((old) => old.expires_at === null || Date.parse(old.expires_at) > now.getTime());
    return [{ secret, expires_at: null }, ...live.map((old) => ({ secret: old.secret, expires_at: old.expires_at ?? expires }))];
  };
  const { scope, hooks } = await scopedHooks(ctx);
  const found = findHook(hooks, scope, options.id);
  if (found.secrets_in === undefined) {
    await editHook(ctx, options.id, (hook) => {
      hook.secrets = rotated(secretsOf(hook));
    });
  } else {
    // In the credential store, the entry alone changes: the file names no secret.
    const credentials = ctx.credentials();
    try {
      await credentials.set(hookSecretsAccount(found), JSON.stringify(rotated(secretsOf(found))));
    } catch (error) {
      if (!(error instanceof CredentialStoreUnavailable)) throw error;
      throw new MissingCredentialsError(`cannot rotate the secret of hook ${found.id} in the ${credentials.label}: ${error.reason}; the old secret stays`, { cause: error });
    }
  }
  const out = createOutput(ctx);
  if (ctx.globals.json) await out.json({ id: options.id, secret, previous_expires_at: expires });
  else {
    ctx.io.stdout.write(`${secret}\n`);
    await out.note(`New secret for ${options.id}, shown this once. Until ${expires} every delivery carries signatures by both the old and the new secret.`);
  }
  return 0;
}
