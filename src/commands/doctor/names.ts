import { CONFIGURABLE_QUERY_PARAMETERS, type ConfigurableQueryParameter } from '../../config/settings';
import { alternativesTo, CANDIDATE_NAMES, decideOffset } from '../../api/queryNames';
import type { CountedApi } from './budget';

export { CANDIDATE_NAMES, decideOffset };

/**
 * Finding the query parameter names the service honours for the five the contract does not name,
 * by requests whose answers differ when a name is honoured.
 *
 * A filter name is honoured when, given a value that some items of the unfiltered answer have and
 * others lack, the answer holds only items with that value (and so differs from the unfiltered
 * one); it is ignored when the answer is the unfiltered one again. The offset name is honoured
 * when `limit=1&<name>=1` answers the unfiltered list's second item, ignored when it answers the
 * first. Anything else (an error, an empty answer, too little data) is "could not decide": a
 * guess stored in the profile would silently break the filter.
 *
 * Two requests at most per name: the configured name alone, then, only if it is ignored, the other
 * candidates together, each with its own value (another present value, another offset), so that
 * the answer tells which one, if any, was honoured.
 */

/** The item field each filter selects on. */
const FILTER_FIELD: Record<Exclude<ConfigurableQueryParameter, 'deliverables.offset'>, string> = {
  'projects.type': 'type',
  'projects.status': 'status',
  'deliverables.account_id': 'account_id',
  'deliverables.project_type': 'project_type',
};

export interface NameFinding {
  setting: ConfigurableQueryParameter;
  /** The name taxprep sends now. */
  configured: string;
  /** `not_checked`: the key may not read the list the name belongs to. */
  outcome: 'honoured' | 'other' | 'none' | 'undecided' | 'not_checked';
  /** The name found honoured (`honoured`: the configured one). */
  found?: string;
  /** The evidence, or why it could not be decided. */
  detail: string;
}

type Item = Record<string, unknown>;
type Answer = { items: Item[] } | { problem: string };

const asText = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value));
const idsOf = (items: readonly Item[]) => JSON.stringify(items.map((item) => asText(item?.id) ?? null));

/** Values of `field` present in `items`, those of fewest items first (the most telling filter); only when at least two differ. */
export function telltaleValues(items: readonly Item[], field: string): string[] {
  const counts = new Map<string, number>();
  for (const item of items) {
    const value = asText(item?.[field]);
    if (value !== undefined) counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  if (counts.size < 2) return [];
  return [...counts.entries()].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).map(([value]) => value);
}

/**
 * Which of `values` (one per name sent) the answer was filtered by: its index, 'ignored' when the
 * answer is the unfiltered one, 'undecided' otherwise.
 */
export function decideFilter(baseline: readonly Item[], field: string, values: readonly string[], answer: readonly Item[]): number | 'ignored' | 'undecided' {
  if (idsOf(answer) === idsOf(baseline)) return 'ignored';
  if (answer.length === 0) return 'undecided';
  const kept = new Set(answer.map((item) => asText(item?.[field])));
  if (kept.size !== 1) return 'undecided';
  const index = values.indexOf([...kept][0] ?? '');
  return index < 0 ? 'undecided' : index;
}

interface Lists {
  /** The unfiltered first page of deliverables (up to 100), when the key may read them. */
  deliverables?: Item[];
  /** An account's unfiltered projects, and the account. */
  projects?: { accountId: string; items: Item[] };
}

/** Asks the service and reads the list out of its answer. */
async function ask(api: CountedApi, path: string, key: string, query: Record<string, string>): Promise<Answer> {
  const answer = await api.raw('GET', path, { query });
  const list = (answer.json as Record<string, unknown> | undefined)?.[key];
  if (answer.status < 200 || answer.status > 299) {
    const code = (answer.json as { error?: { code?: unknown } } | undefined)?.error?.code;
    return { problem: `the service answered HTTP ${answer.status}${typeof code === 'string' ? ` ${code}` : ''}` };
  }
  return Array.isArray(list) ? { items: list as Item[] } : { problem: `the answer has no ${key} list` };
}

const query = (pairs: ReadonlyArray<[string, string]>) => Object.fromEntries(pairs);
const listNames = (names: readonly string[]) => names.map((name) => `"${name}"`).join(', ');

interface Probe {
  setting: ConfigurableQueryParameter;
  configured: string;
  /** Sends the names with a value each; the answer's index of the one honoured, or why none/undecided. */
  send(names: readonly string[]): Promise<number | 'ignored' | string>;
  /** How many names one request can tell apart. */
  capacity: number;
  evidence(name: string): string;
}

function filterProbe(setting: Exclude<ConfigurableQueryParameter, 'deliverables.offset'>, configured: string, api: CountedApi, path: string, key: string, baseline: Item[], paging: Record<string, string>): Probe | string {
  const field = FILTER_FIELD[setting];
  const values = telltaleValues(baseline, field);
  if (values.length === 0) return `too little data: the ${baseline.length} ${key} read all have the same ${field}, so a filter would change nothing`;
  let sent: readonly string[] = [];
  const valueOf = (name: string) => values[sent.indexOf(name)];
  return {
    setting,
    configured,
    capacity: values.length,
    async send(names) {
      sent = names;
      const answer = await ask(api, path, key, { ...paging, ...query(names.map((name, index) => [name, values[index]!])) });
      if ('problem' in answer) return answer.problem;
      const decision = decideFilter(baseline, field, values.slice(0, names.length), answer.items);
      return decision === 'undecided' ? `the answer matched no name's value (${answer.items.length} ${key})` : decision;
    },
    evidence: (name) => `${name}=${valueOf(name)} kept only ${key} whose ${field} is ${valueOf(name)}`,
  };
}

function offsetProbe(configured: string, api: CountedApi, baseline: Item[]): Probe | string {
  if (baseline.length < 2) return `too little data: ${baseline.length} deliverable${baseline.length === 1 ? '' : 's'}, and an offset shows only with two`;
  let sent: readonly string[] = [];
  return {
    setting: 'deliverables.offset',
    configured,
    capacity: baseline.length - 1,
    async send(names) {
      sent = names;
      const answer = await ask(api, '/deliverables', 'deliverables', { limit: '1', ...query(names.map((name, index) => [name, String(index + 1)])) });
      if ('problem' in answer) return answer.problem;
      const decision = decideOffset(baseline, answer.items);
      return decision === 'undecided' ? 'the answer was not one of the deliverables listed before' : decision;
    },
    evidence: (name) => {
      const offset = sent.indexOf(name) + 1;
      return `limit=1&${name}=${offset} answered deliverable ${String(baseline[offset]?.id)}, the one after ${offset === 1 ? 'the first' : `the first ${offset}`}`;
    },
  };
}

/**
 * Runs the probes: the configured names first (one request each), then the alternatives of those
 * ignored (one request each). At most ten requests.
 */
export async function findNames(api: CountedApi, names: Record<string, string>, lists: Lists): Promise<NameFinding[]> {
  const probes: Array<Probe | NameFinding> = [];
  const configured = (setting: ConfigurableQueryParameter) => names[setting] ?? CONFIGURABLE_QUERY_PARAMETERS[setting];
  const undecided = (setting: ConfigurableQueryParameter, detail: string): NameFinding => ({ setting, configured: configured(setting), outcome: 'undecided', detail });
  const add = (setting: ConfigurableQueryParameter, probe: Probe | string | undefined, missing: string) =>
    probes.push(probe === undefined ? { ...undecided(setting, missing), outcome: 'not_checked' } : typeof probe === 'string' ? undecided(setting, probe) : probe);

  const deliverables = lists.deliverables;
  const noDeliverables = 'the key cannot list deliverables';
  const page = { limit: '100' };
  add('deliverables.offset', deliverables && offsetProbe(configured('deliverables.offset'), api, deliverables), noDeliverables);
  add('deliverables.account_id', deliverables && filterProbe('deliverables.account_id', configured('deliverables.account_id'), api, '/deliverables', 'deliverables', deliverables, page), noDeliverables);
  add('deliverables.project_type', deliverables && filterProbe('deliverables.project_type', configured('deliverables.project_type'), api, '/deliverables', 'deliverables', deliverables, page), noDeliverables);
  const projects = lists.projects;
  const projectsPath = projects && `/accounts/${encodeURIComponent(projects.accountId)}/projects`;
  const noProjects = 'no account whose projects the key can list';
  add('projects.type', projects && filterProbe('projects.type', configured('projects.type'), api, projectsPath!, 'projects', projects.items, {}), noProjects);
  add('projects.status', projects && filterProbe('projects.status', configured('projects.status'), api, projectsPath!, 'projects', projects.items, {}), noProjects);

  const findings = new Map<ConfigurableQueryParameter, NameFinding>();
  const ignored: Probe[] = [];
  for (const probe of probes) {
    if ('outcome' in probe) {
      findings.set(probe.setting, probe);
      continue;
    }
    const decision = await probe.send([probe.configured]);
    if (decision === 0) findings.set(probe.setting, { setting: probe.setting, configured: probe.configured, outcome: 'honoured', found: probe.configured, detail: probe.evidence(probe.configured) });
    else if (decision === 'ignored') ignored.push(probe);
    else findings.set(probe.setting, undecided(probe.setting, `"${probe.configured}": ${String(decision)}`));
  }
  for (const probe of ignored) {
    const tried = alternativesTo(probe.setting, probe.configured).slice(0, probe.capacity);
    const untried = alternativesTo(probe.setting, probe.configured).slice(probe.capacity);
    const decision = await probe.send(tried);
    const base = { setting: probe.setting, configured: probe.configured };
    if (typeof decision === 'number') findings.set(probe.setting, { ...base, outcome: 'other', found: tried[decision]!, detail: probe.evidence(tried[decision]!) });
    else if (decision === 'ignored') {
      const notTried = untried.length === 0 ? '' : ` (${listNames(untried)} not tried: too little data to tell them apart)`;
      findings.set(probe.setting, { ...base, outcome: 'none', detail: `the service ignores ${listNames([probe.configured, ...tried])}${notTried}` });
    } else findings.set(probe.setting, { ...base, outcome: 'undecided', detail: `"${probe.configured}" is ignored; trying ${listNames(tried)}: ${decision}` });
  }
  return (Object.keys(CANDIDATE_NAMES) as ConfigurableQueryParameter[]).map((setting) => findings.get(setting)!);
}
