import type { Context } from '../../types';
import { EXIT } from '../../errors';
import { createOutput } from '../../output';
import type { RawInvocation } from '../types';

export type HealthOptions = Record<string, never>;

export function parseOptions(_raw: RawInvocation): HealthOptions {
  return {};
}

/** Exit 0 only when the service says `ok`: a monitoring script can branch on the code alone. */
export async function run(ctx: Context, _options: HealthOptions): Promise<number> {
  const out = createOutput(ctx);
  const [api, settings] = await Promise.all([ctx.api({ requireKey: false }), ctx.settings()]);
  const response = await api.call('health');
  const healthy = response.data.status === 'ok';
  if (ctx.globals.json) await out.json(response.json);
  else {
    const { format } = out;
    await out.card([
      {
        rows: [
          ['Status', format.status(response.data.status)],
          ['Service', format.text(settings.baseUrl)],
          ['Checked', format.date(response.data.timestamp)],
        ],
      },
    ]);
  }
  if (healthy) return EXIT.OK;
  await out.note(`The service answered but reports status "${out.format.text(response.data.status)}", not "ok".`);
  return EXIT.SERVER;
}
