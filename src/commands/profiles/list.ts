import type { Context } from '../../types';
import { createOutput, freeText } from '../../output';
import type { RawInvocation } from '../types';
import { keyLocation, profileView } from './view';

export function parseOptions(_raw: RawInvocation): Record<string, never> {
  return {};
}

export async function run(ctx: Context): Promise<number> {
  const store = await ctx.profiles();
  const defaultName = store.defaultName();
  const views = store.list().map((profile) => profileView(profile, defaultName, keyLocation(ctx, store, profile)));
  const out = createOutput(ctx);
  if (ctx.globals.json) {
    await out.json({ profiles: views });
  } else if (views.length === 0) {
    await out.note('No profiles yet. Add one with: taxprep profiles add <name>');
  } else {
    await out.table(
      ['default', 'name', freeText('base url', { min: 24 }), 'api key'],
      views.map((view) => [view.default ? '*' : '', view.name, view.base_url, view.api_key ?? (view.api_key_location.startsWith('command') ? 'from its command' : 'credential store')]),
    );
  }
  return 0;
}
