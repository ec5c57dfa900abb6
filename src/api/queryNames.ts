import { CONFIGURABLE_QUERY_PARAMETERS, type ConfigurableQueryParameter } from '../config/settings';

/**
 * The names services commonly give the five query parameters the contract does not name, and how
 * an answer tells whether an offset name was honoured. `doctor` tries them all (its
 * src/commands/doctor/names.ts); `--all` tries the offset's when a page repeats.
 */

/** Names services commonly use, the contract's (or taxprep's default) first. */
export const CANDIDATE_NAMES: Record<ConfigurableQueryParameter, readonly string[]> = {
  'projects.type': ['type', 'project_type', 'projectType'],
  'projects.status': ['status', 'project_status', 'projectStatus'],
  'deliverables.account_id': ['account_id', 'account', 'accountId'],
  'deliverables.project_type': ['project_type', 'type', 'projectType'],
  'deliverables.offset': ['offset', 'skip', 'start'],
};

type Item = Record<string, unknown>;

const asText = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value));

/** The names to try after the configured one: the other candidates, taxprep's default among them. */
export function alternativesTo(setting: ConfigurableQueryParameter, configured: string): string[] {
  return [...new Set([CONFIGURABLE_QUERY_PARAMETERS[setting], ...CANDIDATE_NAMES[setting]])].filter((name) => name !== configured);
}

/** Which offset (1, 2, ... for the names sent in order) a `limit=1` answer skipped to: its index, 'ignored', or 'undecided'. */
export function decideOffset(baseline: readonly Item[], answer: readonly Item[]): number | 'ignored' | 'undecided' {
  if (answer.length !== 1) return 'undecided';
  const id = asText(answer[0]?.id);
  const position = baseline.findIndex((item) => asText(item?.id) === id);
  if (position === 0) return 'ignored';
  return position > 0 ? position - 1 : 'undecided';
}

/** A list request with these query parameters (taxprep adds the filters of the list at hand): the items, or why there are none. */
export type AskList = (query: Record<string, string>) => Promise<Item[] | string>;

/** The offset name found, with the requests it cost, or why none could be decided. */
export type OffsetFinding = { found: string; requests: number } | { problem: string; requests: number };

/**
 * Finds the offset name the service honours, given the list's first page as sent (`baseline`):
 * one request of `limit=1` with each alternative name at its own offset (1, 2, ...), whose one item
 * tells which name moved it; a larger first page first when the one at hand is too short to tell
 * the names apart. At most two requests.
 */
export async function findOffsetName(ask: AskList, configured: string, baseline: readonly Item[]): Promise<OffsetFinding> {
  const alternatives = alternativesTo('deliverables.offset', configured);
  let requests = 0;
  let items = baseline;
  if (items.length < alternatives.length + 1) {
    requests += 1;
    const wider = await ask({ limit: '100' });
    if (typeof wider === 'string') return { problem: wider, requests };
    items = wider;
  }
  if (items.length < 2) return { problem: `too little data: ${items.length} item${items.length === 1 ? '' : 's'}, and an offset shows only with two`, requests };
  const tried = alternatives.slice(0, items.length - 1);
  requests += 1;
  const answer = await ask({ limit: '1', ...Object.fromEntries(tried.map((name, index) => [name, String(index + 1)])) });
  if (typeof answer === 'string') return { problem: answer, requests };
  const decision = decideOffset(items, answer);
  const names = [configured, ...tried].map((name) => `"${name}"`).join(', ');
  if (decision === 'ignored') return { problem: `the service ignores ${names}`, requests };
  if (decision === 'undecided') {
    const why = answer.length === 1 ? 'its one item was not among those listed before' : `it sent ${answer.length} items for limit=1`;
    return { problem: `trying ${names}, the answer told nothing: ${why}`, requests };
  }
  return { found: tried[decision]!, requests };
}
