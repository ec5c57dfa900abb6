import type { LearnedRule, LearnedService, LearnedStore } from '../config/learned';
import type { PieceMove } from './moveWatch';

/**
 * `state import` and `export` of the rules learned from the service: each rule (the upload limit,
 * the file types, each query parameter's name) is copied where the target has none or an older
 * one (by `learned_at`), so the newer word of the service wins and a second run copies nothing.
 */
export async function moveLearned(from: LearnedStore, to: LearnedStore, options: { dryRun: boolean }): Promise<PieceMove> {
  const source = await from.read();
  const plan = (target: LearnedService) => {
    const newer = (rule: LearnedRule<unknown> | undefined, known: LearnedRule<unknown> | undefined) => rule !== undefined && (known === undefined || Date.parse(known.learned_at) < Date.parse(rule.learned_at));
    const parameters = Object.entries(source.query_parameters ?? {}).filter(([setting, rule]) => newer(rule, target.query_parameters?.[setting]));
    const next: LearnedService = {
      ...target,
      ...(newer(source.upload_max_bytes, target.upload_max_bytes) ? { upload_max_bytes: source.upload_max_bytes } : {}),
      ...(newer(source.upload_types, target.upload_types) ? { upload_types: source.upload_types } : {}),
      ...(parameters.length === 0 ? {} : { query_parameters: { ...target.query_parameters, ...Object.fromEntries(parameters) } }),
    };
    const copied = Number(next.upload_max_bytes !== target.upload_max_bytes) + Number(next.upload_types !== target.upload_types) + parameters.length;
    return { next, copied };
  };
  const total = Number(source.upload_max_bytes !== undefined) + Number(source.upload_types !== undefined) + Object.keys(source.query_parameters ?? {}).length;
  if (total === 0) return { kind: { label: 'learned rules' }, copied: 0, present: 0 };
  let copied: number;
  if (options.dryRun) {
    copied = plan(await to.read()).copied;
  } else {
    copied = 0;
    // Planned inside the target's change, from the target as it is then (another machine may have learned meanwhile).
    await to.update((target) => {
      const planned = plan(target);
      copied = planned.copied;
      return planned.next;
    });
  }
  return { kind: { label: 'learned rules' }, copied, present: total - copied };
}
