import type { Context } from '../../types';
import { createOutput } from '../../output';
import { parseId } from '../parseFlags';
import type { RawInvocation } from '../types';

export interface GetAccountOptions {
  accountId: number;
}

export function parseOptions(raw: RawInvocation): GetAccountOptions {
  return { accountId: parseId(raw.args[0], '<account-id>') };
}

export async function run(ctx: Context, options: GetAccountOptions): Promise<void> {
  const out = createOutput(ctx);
  const api = await ctx.api();
  const response = await api.call('getAccount', { params: { account_id: options.accountId } });
  if (ctx.globals.json) return out.json(response.json);
  const { data: account } = response;
  const { format } = out;
  await out.card([
    {
      title: `Account ${format.text(account.id)}`,
      rows: [
        ['Name', format.name(account.first_name, account.last_name)],
        ['Email', format.text(account.email)],
        ['Status', format.status(account.status)],
      ],
    },
  ]);
}
