import { CHANGE_EVENTS } from '../../follow/changes';
import type { ArgumentSpec, CommandSpec } from '../spec';

/** Commands that change the hooks file, under its lock. */
const HOOKS_FILE: CommandSpec['exitCodes'] = [['LOCKED', 'another taxprep run held the hooks file for 10 seconds; nothing was changed']];
/** Commands that change the outbox: a running watch is handed their work; another hooks command holding it makes them wait. */
const OUTBOX: CommandSpec['exitCodes'] = [['LOCKED', 'another hooks command (not a watch) held the outbox for 2 seconds; nothing was changed'], ['INTERRUPTED', 'Ctrl-C before the running watch took the request, which it (or the next to hold the outbox) still applies']];

const HOOK: ArgumentSpec = { name: '<hook>', help: 'hook id (hk_...), as hooks list shows it' };

export const hooks: CommandSpec = {
  name: 'hooks',
  description: 'Push every change watch finds to your own systems: signed webhooks (Standard Webhooks) or a command, delivered at least once',
  subcommands: [
    {
      name: 'add',
      description: 'Add a hook: a URL that receives signed POSTs, or a command run with the event on stdin; prints its secret once',
      arguments: [{ name: '[url]', help: 'https URL of the receiver (http only to loopback, or with --allow-http)' }],
      flags: [
        { flag: '--exec <command>', help: 'run this through /bin/sh -c instead, body on stdin, TAXPREP_WEBHOOK_ID and TAXPREP_EVENT_TYPE set; exit 0 is delivered' },
        { flag: '--events <patterns>', help: 'comma-separated event names or * globs, e.g. deliverable.*,item.appeared', default: '*' },
        { flag: '--format <format>', help: 'standard: {type, timestamp, data}; text: {"text": one sentence}, for chat incoming webhooks', values: ['standard', 'text'], default: 'standard' },
        { flag: '--header <header>', help: '"Name: value" sent with every delivery (repeatable; stored 0600, shown redacted)', repeatable: true },
        { flag: '--retry-schedule <durations>', help: 'waits between attempts; spent: the delivery is failed', default: '5s,5m,30m,2h,5h,10h,10h' },
        { flag: '--timeout <duration>', help: 'time allowed for one attempt', default: '15s' },
        { flag: '--rate <n/min>', help: 'at most n deliveries to this hook per minute (also /s, /h)' },
        { flag: '--ordered', help: 'one delivery at a time, in the order the changes were found' },
        { flag: '--allow-http', help: 'allow plain http to a host other than loopback' },
        { flag: '--disable-after <duration>', help: 'disable a hook whose every delivery failed this long', default: '5d' },
        { flag: '--insecure-storage', help: 'keep the secret in hooks.json (0600), not in the credential store' },
      ],
      examples: [
        'taxprep hooks add https://crm.example.com/taxprep --events "deliverable.*"',
        'taxprep hooks add https://hooks.slack.com/services/T000/B000/XXX --format text --events item.appeared',
        "taxprep hooks add --exec 'jq -c . >> ~/changes.ndjson'",
      ],
      notes:
        'Events: ' + [...CHANGE_EVENTS, 'taxprep.ping'].join(', ') + '.\n' +
        'Every POST carries webhook-id (one per change, the same on every attempt), webhook-timestamp and\n' +
        'webhook-signature (v1, HMAC-SHA256 with the secret; two while a rotation overlaps). 2xx is\n' +
        'delivered; 410 disables the hook; 429 and 503 wait at least Retry-After; anything else is retried.\n' +
        'Hooks belong to the profile and base URL in use. Guide: docs/webhooks.md.\n' +
        "The secret is kept in the system's credential store (as the profile's key is: docs/secrets.md), or in\n" +
        'hooks.json with --insecure-storage or for a profile added with --insecure-storage. No store: exit 2.',
      exitCodes: [...HOOKS_FILE!, ['USAGE', 'bad flags, or no credential store answers: no hook was added']],
      load: () => import('./add'),
    },
    {
      name: 'list',
      description: "List this profile's hooks: state, pending and failed deliveries (secrets and headers redacted)",
      examples: ['taxprep hooks list', "taxprep hooks list --json | jq -r '.hooks[] | select(.enabled | not) | .id'"],
      exitCodes: [],
      load: () => import('./list'),
    },
    {
      name: 'show',
      description: 'Show a hook (redacted); --secret prints only its secret, for a pipe',
      arguments: [HOOK],
      flags: [{ flag: '--secret', help: 'print the live secret(s) alone, one a line (two during a rotation)' }],
      examples: ['taxprep hooks show hk_1a2b3c4d5e6f', 'taxprep hooks show hk_1a2b3c4d5e6f --secret > hook.secret'],
      exitCodes: [],
      load: () => import('./show'),
    },
    { name: 'remove', description: 'Remove a hook and its secret', arguments: [HOOK], examples: ['taxprep hooks remove hk_1a2b3c4d5e6f'], exitCodes: HOOKS_FILE, load: () => import('./remove') },
    { name: 'enable', description: 'Enable a hook again (after a 410, --disable-after or hooks disable)', arguments: [HOOK], examples: ['taxprep hooks enable hk_1a2b3c4d5e6f'], exitCodes: HOOKS_FILE, load: () => import('./enable') },
    { name: 'disable', description: 'Stop queueing and sending to a hook; what is pending waits for enable', arguments: [HOOK], examples: ['taxprep hooks disable hk_1a2b3c4d5e6f'], exitCodes: HOOKS_FILE, load: () => import('./disable') },
    {
      name: 'rotate-secret',
      description: 'Give a hook a new secret (printed once); the old one also signs for 24 hours',
      arguments: [HOOK],
      examples: ['taxprep hooks rotate-secret hk_1a2b3c4d5e6f > new.secret'],
      exitCodes: HOOKS_FILE,
      load: () => import('./rotate-secret'),
    },
    {
      name: 'test',
      description: 'Send a signed taxprep.ping now; exit 0 when delivered, 7 when not',
      arguments: [HOOK],
      examples: ['taxprep hooks test hk_1a2b3c4d5e6f'],
      exitCodes: [['NETWORK', 'the ping was not delivered (no 2xx, or the command did not exit 0)']],
      load: () => import('./test'),
    },
    {
      name: 'deliveries',
      description: 'List deliveries: pending, failed, delivered, moved',
      flags: [
        { flag: '--hook <hook>', help: 'only this hook' },
        { flag: '--status <status>', help: 'which deliveries', values: ['pending', 'failed', 'delivered', 'moved', 'all'], default: 'all' },
        { flag: '--since <time>', help: 'only changes seen since: an ISO date or time, or a duration ago (24h, 7d)' },
      ],
      examples: ['taxprep hooks deliveries --status failed', 'taxprep hooks deliveries --hook hk_1a2b3c4d5e6f --since 24h --json'],
      exitCodes: [],
      load: () => import('./deliveries'),
    },
    {
      name: 'redeliver',
      description: 'Make deliveries due again (same webhook-id); a running watch sends them at once, else hooks deliver',
      arguments: [{ name: '<delivery...>', help: 'a delivery (<webhook-id>:<hook>) or a webhook-id (all its hooks)' }],
      examples: ["taxprep hooks deliveries --status failed --json | jq -r '.deliveries[].delivery' | xargs taxprep hooks redeliver"],
      notes: "It only marks deliveries due; beside a running watch (with a shared store: the team's watch, on any machine) the watch sends them at once. Guide: docs/webhooks.md.",
      exitCodes: OUTBOX,
      load: () => import('./redeliver'),
    },
    {
      name: 'recover',
      description: 'Send a hook again every change the outbox holds that was seen since a time',
      arguments: [HOOK],
      flags: [{ flag: '--since <time>', help: 'an ISO date or time, or a duration ago (24h, 7d)', required: true }],
      examples: ['taxprep hooks recover hk_1a2b3c4d5e6f --since 2026-11-24'],
      exitCodes: OUTBOX,
      load: () => import('./recover'),
    },
    {
      name: 'deliver',
      description: 'Send what is due now and ask the service nothing (for cron between watch runs)',
      flags: [
        { flag: '--wait', help: 'stay until nothing is pending, retries included' },
        { flag: '--retry-now', help: 'also send now what waits for a retry (a receiver back after failures); schedules start again' },
      ],
      examples: ['*/5 * * * * taxprep hooks deliver', 'taxprep hooks deliver --retry-now'],
      notes: "Beside a running watch (with a shared store: the team's watch, on any machine) the watch sends (this run hands it the work and reports what it sent). Exit 0; 9 when a delivery failed for good in this run.",
      exitCodes: [['PARTIAL', 'a delivery failed for good in this run'], ['LOCKED', 'another hooks command (not a watch) held the outbox for 2 seconds; nothing was sent'], 'INTERRUPTED'],
      load: () => import('./deliver'),
    },
    {
      name: 'listen',
      description: 'A local receiver on 127.0.0.1 that verifies each signature and prints the event',
      flags: [
        { flag: '--port <n>', help: 'port to listen on (0: any free port)', default: '8788' },
        { flag: '--secret-file <file>', help: 'the hook\'s secret(s), one a line (else TAXPREP_WEBHOOK_SECRET)', complete: 'files' },
      ],
      examples: ['taxprep hooks show hk_1a2b3c4d5e6f --secret > hook.secret && taxprep hooks listen --secret-file hook.secret'],
      // Ctrl-C and SIGTERM end it with 0: being stopped is how a receiver ends.
      exitCodes: [],
      load: () => import('./listen'),
    },
  ],
};
