import { CHANGE_EVENTS, type Change } from '../follow/changes';
import { UsageError } from '../errors';

/**
 * The event names a hook can ask for: every change `watch` reports, and the ping of `hooks test`.
 * A hook's `--events` are `*` globs over these names, checked when the hook is added, so that a
 * typo (`deliverables.*`) is refused instead of silently matching nothing for ever.
 */
export const PING_EVENT = 'taxprep.ping';
export const EVENT_NAMES: readonly string[] = [...CHANGE_EVENTS, PING_EVENT];

function globOf(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** `deliverable.*,item.appeared` -> its patterns; each must match at least one event name. */
export function parseEventPatterns(text: string): string[] {
  const patterns = text.split(',').map((pattern) => pattern.trim());
  for (const pattern of patterns) {
    const rule = `must be a comma-separated list of event names or * globs matching at least one of ${EVENT_NAMES.join(', ')}`;
    if (pattern === '' || !EVENT_NAMES.some((name) => globOf(pattern).test(name))) {
      throw new UsageError(`--events: "${pattern}" matches no event name; it ${rule}`, { details: { '--events': [rule] } });
    }
  }
  return patterns;
}

export function matchesEvent(patterns: readonly string[], event: string): boolean {
  return patterns.some((pattern) => globOf(pattern).test(event));
}

/** One sentence per change, for `--format text` (chat incoming webhooks). */
export function sentenceOf(type: string, data: Partial<Change> & Record<string, unknown>): string {
  if (type === PING_EVENT) return 'taxprep: test delivery (taxprep.ping).';
  const where = `project ${data.project_id ?? '?'}${data.account_id == null ? '' : ` (account ${data.account_id})`}`;
  const value = (side: unknown) => (side === null || side === undefined ? 'none' : typeof side === 'object' ? String((side as { description?: unknown }).description ?? JSON.stringify(side)) : String(side));
  switch (type) {
    case 'deliverable.appeared':
      return `Deliverable ${data.deliverable_id} of ${where} appeared (${value(data.new)}).`;
    case 'deliverable.status':
      return `Deliverable ${data.deliverable_id} of ${where} moved from ${value(data.old)} to ${value(data.new)}.`;
    case 'project.appeared':
      return `Project ${data.project_id}${data.account_id == null ? '' : ` of account ${data.account_id}`} appeared (${value(data.new)}).`;
    case 'item.appeared':
      return `Outstanding item for ${where}: ${value(data.new)}.`;
    case 'item.resolved':
      return `Outstanding item of ${where} resolved: ${value(data.old)}.`;
    default:
      return `${type} of ${where}: ${value(data.old)} -> ${value(data.new)}.`;
  }
}
