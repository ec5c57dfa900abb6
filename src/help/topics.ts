import type { Command } from 'commander';
import { flagHelp, HELP_FLAG, VERSION_FLAG } from '../commands/spec';
import { program as programSpec } from '../commands/tree';
import { ENVIRONMENT_VARIABLES, DEFAULT_BASE_URL } from '../config/settings';
import { EXIT, EXIT_CODE_MEANINGS, UsageError } from '../errors';
import { terminalText, type Block } from './blocks';
import type { HelpTopic } from './register';

/**
 * The help topics, written once as blocks: `taxprep help TOPIC` wraps them to the terminal,
 * taxprep(1) sets them as roff and docs/commands/ as markdown (src/commands/man.ts, markdown.ts).
 */
export interface TopicText {
  /** One line: the topic's title in docs/ and man. */
  title: string;
  blocks(): Block[];
}

export const HELP_TOPICS: Record<HelpTopic, TopicText> = {
  environment: { title: 'Settings and environment variables', blocks: environmentBlocks },
  'exit-codes': { title: 'Exit codes', blocks: exitCodeBlocks },
  formatting: { title: 'Output formats: tables, TSV, --json, --jq', blocks: formattingBlocks },
  flags: { title: 'The flags every command takes', blocks: flagBlocks },
};

/** Prints a topic, or the help of the command the words name (`taxprep help docs upload`). */
export function showHelp(program: Command, words: string[]): void {
  if (words.length === 0) return program.outputHelp();
  const topic = HELP_TOPICS[words.join(' ') as HelpTopic] as TopicText | undefined;
  if (topic !== undefined) {
    const output = program.configureOutput();
    output.writeOut!(`${terminalText(topic.blocks(), output.getOutHelpWidth?.() ?? 80)}\n`);
    return;
  }
  let command = program;
  for (const [index, word] of words.entries()) {
    const listed = command.commands.filter((candidate) => !isHidden(candidate));
    const next = listed.find((candidate) => candidate.name() === word || candidate.aliases().includes(word));
    if (next === undefined) {
      const known = [...(index === 0 ? Object.keys(HELP_TOPICS) : []), ...listed.map((candidate) => candidate.name())];
      const close = closestWord(word, known);
      const hint = close === undefined ? `Topics and commands: ${known.join(', ')}` : `Did you mean "taxprep help ${[...words.slice(0, index), close].join(' ')}"?`;
      throw new UsageError(`no help topic or command "${words.join(' ')}"`, { hint });
    }
    command = next;
  }
  command.outputHelp();
}

/** Hidden commands (`__complete`) are never listed nor suggested. Commander keeps the mark private. */
function isHidden(command: Command): boolean {
  return (command as unknown as { _hidden?: boolean })._hidden === true;
}

/**
 * The known word a typo most likely meant, as commander suggests for commands: the fewest edits
 * (insert, delete, replace, swap two neighbours), at most a third of the word and no more than 3.
 */
export function closestWord(word: string, known: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Optimal string alignment distance: Levenshtein with transpositions of adjacent letters. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (__, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** `taxprep help environment`: where settings come from, and every variable read. */
function environmentBlocks(): Block[] {
  const { profile, apiKey, baseUrl } = ENVIRONMENT_VARIABLES;
  return [
    { kind: 'paragraph', text: 'Settings are taken in this order; the first that gives a value wins:' },
    {
      kind: 'steps',
      items: [
        'flags: --profile, --base-url (a profile chosen with --profile supplies its key and base URL)',
        `environment: ${profile}, ${apiKey}, ${baseUrl}`,
        `the profile: the one named by ${profile}, else the default profile`,
        `defaults: base URL ${DEFAULT_BASE_URL} (where \`taxprep serve --mock\` listens)`,
      ],
    },
    { kind: 'paragraph', text: '`taxprep whoami` shows what is in effect and where each setting came from.' },
    { kind: 'paragraph', text: 'Environment variables:' },
    { kind: 'rows', rows: ENVIRONMENT_ROWS },
  ];
}

/** Every environment variable taxprep reads, with what it does. */
const ENVIRONMENT_ROWS: ReadonlyArray<[string, string]> = [
  [ENVIRONMENT_VARIABLES.apiKey, 'API key to use (for cron and CI; never pass a key as a flag)'],
  [ENVIRONMENT_VARIABLES.baseUrl, 'service address including /v1beta'],
  [ENVIRONMENT_VARIABLES.profile, 'stored profile to use instead of the default'],
  ['TAXPREP_API_KEY_COMMAND_TIMEOUT', "how long a profile's --api-key-command may run before it is stopped (exit 3), e.g. 1m (default 30s)"],
  [ENVIRONMENT_VARIABLES.maxResponseSize, 'largest answer taxprep reads, e.g. 16MB (default 8MB; --max-response-size beats it)'],
  [ENVIRONMENT_VARIABLES.queryParameters, 'names of the query parameters the contract does not show (4 filters, deliverables.offset), e.g. projects.status=state,deliverables.offset=skip; `taxprep doctor` finds them'],
  [ENVIRONMENT_VARIABLES.caFile, "PEM file of certificate authorities trusted beside Node.js's roots and the system's store (--ca-file beats it; the profile's ca_file yields to it)"],
  ['NODE_EXTRA_CA_CERTS', 'PEM file of certificate authorities trusted as well (read by Node.js and by taxprep)'],
  ['SSL_CERT_FILE, SSL_CERT_DIR', "where the system's store is read on Linux, when not in the usual places (as OpenSSL reads them)"],
  [ENVIRONMENT_VARIABLES.stateUrl, "keep taxprep's state in PostgreSQL, shared by a team: postgres://user@host:5432/db (no password: PGPASSWORD, ~/.pgpass; docs/team.md)"],
  [ENVIRONMENT_VARIABLES.stateNamespace, 'the namespace of the shared state (default "default"): two partners on one database use two'],
  ['PGPASSWORD, PGPASSFILE, PGSERVICE, PGHOST, PGUSER, PGDATABASE, PGSSLMODE', "libpq's settings, read for the shared state store as psql reads them"],
  ['HTTPS_PROXY, HTTP_PROXY', 'proxy for https:// and http:// service addresses (lower-case names too)'],
  ['NO_PROXY', 'hosts reached directly, comma-separated (e.g. localhost,.internal)'],
  ['XDG_CONFIG_HOME', 'profiles live in $XDG_CONFIG_HOME/taxprep/profiles.json (default ~/.config)'],
  ['XDG_DATA_HOME', 'the login-link ledger lives in $XDG_DATA_HOME/taxprep (default ~/.local/share)'],
  ['XDG_CACHE_HOME', 'compiled code is kept between runs in $XDG_CACHE_HOME/taxprep/compiled (default ~/.cache)'],
  ['NODE_DISABLE_COMPILE_CACHE', 'any non-empty value: no compiled-code cache is read or written'],
  ['NO_COLOR', 'any non-empty value turns colour off'],
  ['FORCE_COLOR', 'turns colour on even in a pipe (except FORCE_COLOR=0)'],
  ['TERM=dumb', 'turns colour off'],
  ['TAXPREP_FORCE_TTY', 'print as for a terminal (headers, readable dates) in a pipe too; a number also sets the width'],
  ['BROWSER=none', 'print links instead of opening a browser (deliverables get --open)'],
];

/** `taxprep help exit-codes`. */
function exitCodeBlocks(): Block[] {
  return [
    { kind: 'paragraph', text: 'Exit codes (a number means the same in every command; scripts and cron can branch on them). Each command\'s page (`man taxprep-COMMAND`, docs/commands/) lists the ones it can end with.' },
    { kind: 'rows', rows: EXIT_CODE_MEANINGS.map(([name, meaning]) => [String(EXIT[name]), meaning] as const) },
    { kind: 'paragraph', text: 'With --json, a failure also prints the error as JSON on stderr (as text when stderr is a terminal):' },
    { kind: 'verbatim', text: '  {"error":{"code":"...","message":"...","details":{...}}}' },
    {
      kind: 'paragraph',
      text: 'A stdout that cannot be written ends the command at its next line: 74 with one message (a full disk), 141 quietly when the reader went away; a login-link batch then stops sending, and its ledger keeps what it did.',
    },
  ];
}

/** `taxprep help formatting`: what each output mode prints, and where. */
function formattingBlocks(): Block[] {
  return [
    {
      kind: 'paragraph',
      text: 'On a terminal, lists are tables with a header and single records are cards, with colour, sizes such as 84.0 KB and dates in UTC with a relative time. Tables fit the width of the terminal: dates are shortened first, then free text is cut with …, then the columns a row can be read without are left out (a line under the table names them). Ids, statuses and numbers are never shortened.',
    },
    {
      kind: 'paragraph',
      text: "In a pipe, lists are tab-separated rows without a header, one row per item, for cut -f and awk -F'\\t'; cards have no colour; values are exactly as the service sent them (ISO 8601 dates, byte counts) and nothing is shortened. TAXPREP_FORCE_TTY=1 prints as for a terminal.",
    },
    {
      kind: 'paragraph',
      text: "--json prints the service's JSON document on stdout, fields this version does not know included: pretty on a terminal, one compact line otherwise, nothing else on stdout. A failure prints nothing on stdout and one line of JSON on stderr in the service's error shape (as text when stderr is a terminal).",
    },
    {
      kind: 'paragraph',
      text: "--json FIELDS keeps only those fields, comma-separated: of the document, or of each item of a list (the list's total_count and has_more stay). Each command's help lists its fields; an unknown field is refused (exit 2) before anything is sent. The word after --json is read as fields only when it looks like a field list and names no command.",
    },
    {
      kind: 'paragraph',
      text: "--jq EXPRESSION filters the JSON output with jq 1.8, built in (no jq needed), and implies --json. Strings print as text, anything else as JSON. It sees what --json prints: after --json FIELDS, the whole list with --all, each line with --ndjson. An expression jq cannot compile is refused (exit 2) before anything is sent.",
    },
    {
      kind: 'paragraph',
      text: '--ndjson (docs list, deliverables list) prints one item a line as pages arrive, and wins over --json. Batches (login-link --from, accounts import, docs sync) print one JSON line an item under --json.',
    },
    {
      kind: 'paragraph',
      text: 'Data goes to stdout; messages (empty lists, next-page hints, retries, progress, summaries) go to stderr. Colour only on a terminal, and never with NO_COLOR, TERM=dumb or --no-color; FORCE_COLOR turns it on in a pipe.',
    },
    { kind: 'paragraph', text: 'Examples:' },
    {
      kind: 'verbatim',
      text: [
        "  taxprep docs list 1001 --tax-year 2025 | cut -f1,2",
        '  taxprep docs list 1001 --json id,filename',
        "  taxprep docs list 1001 --jq '.documents[].filename'",
        "  taxprep deliverables list --all --ndjson | jq -r .id",
      ].join('\n'),
    },
  ];
}

/** `taxprep help flags`: the program's flags, which every command's help names in one line. */
function flagBlocks(): Block[] {
  return [
    {
      kind: 'paragraph',
      text: 'Every command takes these flags, before or after its own words: `taxprep --json accounts get 1001` is `taxprep accounts get 1001 --json`. A command\'s own flags are in its help.',
    },
    { kind: 'rows', rows: [...(programSpec.flags ?? []), HELP_FLAG, VERSION_FLAG].map((flag) => [flag.flag, flagHelp(flag)] as const) },
  ];
}
