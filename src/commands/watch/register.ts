import { CHANGE_EVENTS } from '../../follow/changes';
import type { CommandSpec, FlagSpec } from '../spec';
import { SERVICE_WITH_KEY, STATE } from '../exitCodes';

/** The flags `status` and `watch` share: which accounts, and the ledger that names some of them. */
export const ACCOUNT_FLAGS: readonly FlagSpec[] = [
  { flag: '--accounts <file>', help: "also these accounts (- for stdin): one id a line, a CSV or NDJSON with account_id, or an import's file or results", complete: 'files' },
  { flag: '--ledger <path>', help: 'the login-link ledger (default: login-links.ndjson in the user data directory); its accounts and those of the accounts ledger are looked at too', complete: 'files' },
];

export const watch: CommandSpec = {
  name: 'watch',
  description: 'Report only what changed since the last look: deliverables, project status and progress, outstanding items',
  flags: [
    { flag: '--once', help: 'one pass, then exit 0; prints nothing when nothing changed (for cron); exit 6 when the budget allowed no request' },
    { flag: '--budget <n/min>', help: 'requests allowed, e.g. 20/min or 5/10s; at most 100/min and what the key allows', default: '20/min' },
    ...ACCOUNT_FLAGS,
    { flag: '--state <file>', help: 'the file that remembers the last look (default: one per profile and base URL in the user state directory)', complete: 'files' },
    { flag: '--reset-state', help: 'forget the last look (even a damaged state file) and record a new baseline' },
    { flag: '--initial', help: 'on the first look, report everything seen as having appeared (otherwise it prints nothing)' },
    { flag: '--lease <duration>', help: 'with a shared store: how long the watch lease lasts unrenewed (3s to 10m); a standby takes over within it and a sixth more', default: '30s' },
  ],
  examples: [
    'taxprep watch --once                              # from cron: mail only when something changed',
    'taxprep watch --accounts clients.csv --budget 30/min',
    'taxprep watch --json | while read -r change; do echo "$change" | jq -r .event; done',
  ],
  notes:
    'With --json each change is one line: {"event", "account_id", "project_id", "deliverable_id"\n' +
    '(deliverables), "item" (outstanding items), "old", "new", "seen_at"}. Events:\n' +
    ['deliverable.', 'project.', 'item.'].map((noun) => `  ${CHANGE_EVENTS.filter((event) => event.startsWith(noun)).join(', ')}\n`).join('') +
    'A full look is 1 request per 100 deliverables, 1 per account (its project\n' +
    'list: status, progress and estimated completion of all its projects) and 1\n' +
    'per project (its items). Passes go round it, oldest reading first, so every\n' +
    'change is reported within 1.25 x (full look / budget) of happening, plus one\n' +
    'request: over 300 accounts of 2 projects (901 requests) at 20/min, within 56\n' +
    'minutes; over 5 accounts (16) at 100/min, within 12 seconds. Until every\n' +
    "account's project list was read once, the full look is an estimate: no\n" +
    'projects before any list is read (23 for 22 accounts), then as many per\n' +
    'unread account as the read ones have on average (92), then exact (36).\n' +
    'A --once run whose budget allowed no request (spent by runs within its\n' +
    'window) says so on stderr, with when it allows the next, and exits 6.\n' +
    'On a terminal the watch says its own at start, and after each pass how old\n' +
    'its oldest reading is.\n' +
    'Stop with Ctrl-C (exit 130): every change printed is recorded, never printed\n' +
    'again. A kill (kill -9, a crash) between a pass\'s print and its record\n' +
    'prints that pass\'s changes once more at the next run: a change may repeat\n' +
    'once, never be lost.\n' +
    'A damaged state file is refused (exit 2) and left as it is; --reset-state\n' +
    'starts again.\n' +
    'Hooks (taxprep hooks add) get every change as a signed POST or a command,\n' +
    'at least once: a running watch delivers as deliveries fall due, --once\n' +
    'before it exits; hooks redeliver, recover and deliver hand it their work.\n' +
    'One watch per profile and base URL at a time (a second exits 10: another\n' +
    'watch is running).\n' +
    'With a shared store (TAXPREP_STATE_URL; docs/team.md) any number of\n' +
    'machines may run watch: the one holding the lease looks and delivers, the\n' +
    'others stand by (saying so on stderr, and which machine holds it) and take\n' +
    'over within 35s of the holder dying (--lease 30s and a standby\'s poll of\n' +
    '5s), from the last look it recorded. --once finding the lease held exits 0\n' +
    'having read nothing. Under --json the lease is told on stderr, one JSON line\n' +
    'each: {"watch": "standby", "holder": {"host", "pid"}, "lease_expires_at",\n' +
    '"takeover_within_ms"}, {"watch": "holding" or "lost", "fence"}.',
  exitCodes: [
    ...SERVICE_WITH_KEY.filter((name) => name !== 'RATE_LIMITED'),
    ['RATE_LIMITED', 'still rate limited after retrying; or --once: the budget allowed no request, nothing was read'],
    ...STATE,
    ['NOT_FOUND', 'the service answered a list (such as GET /deliverables) with 404'], ['LOCKED', 'another watch of this profile and base URL is running, or a hooks command holds its outbox'], ['INTERRUPTED', 'stopped by Ctrl-C, after saving what it found: how a watch without --once ends']],
  load: () => import('./watch'),
};
