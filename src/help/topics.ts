import type { Command } from 'commander';
import { ENVIRONMENT_VARIABLES, DEFAULT_BASE_URL } from '../config/settings';
import { EXIT_CODE_MEANINGS, UsageError } from '../errors';
import type { HelpTopic } from './register';

export const HELP_TOPICS: Record<HelpTopic, () => string> = {
  environment: environmentTopic,
  'exit-codes': exitCodesTopic,
};

/** Prints a topic, or the help of the command the words name (`taxprep help docs upload`). */
export function showHelp(program: Command, words: string[]): void {
  if (words.length === 0) return program.outputHelp();
  const topic = HELP_TOPICS[words.join(' ') as HelpTopic] as (() => string) | undefined;
  if (topic !== undefined) {
    program.configureOutput().writeOut!(topic());
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

function table(rows: ReadonlyArray<[string, string]>): string {
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, text]) => `  ${name.padEnd(width)}  ${text}`).join('\n');
}

/** The order settings are taken in, for `taxprep help environment` and taxprep(1). */
export const SETTINGS_ORDER = `Settings are taken in this order; the first that gives a value wins:
  1. flags: --profile, --base-url (a profile chosen with --profile supplies its key and base URL)
  2. environment: ${ENVIRONMENT_VARIABLES.profile}, ${ENVIRONMENT_VARIABLES.apiKey}, ${ENVIRONMENT_VARIABLES.baseUrl}
  3. the profile: the one named by ${ENVIRONMENT_VARIABLES.profile}, else the default profile
  4. defaults: base URL ${DEFAULT_BASE_URL} (where \`taxprep serve --mock\` listens)
\`taxprep whoami\` shows what is in effect and where each setting came from.`;

/** Every environment variable taxprep reads, with what it does. */
export const ENVIRONMENT_ROWS: ReadonlyArray<[string, string]> = [
  [ENVIRONMENT_VARIABLES.apiKey, 'API key to use (for cron and CI; never pass a key as a flag)'],
  [ENVIRONMENT_VARIABLES.baseUrl, 'service address including /v1beta'],
  [ENVIRONMENT_VARIABLES.profile, 'stored profile to use instead of the default'],
  [ENVIRONMENT_VARIABLES.maxResponseSize, 'largest answer taxprep reads, e.g. 16MB (default 8MB; --max-response-size beats it)'],
  [ENVIRONMENT_VARIABLES.queryParameters, 'names of the query parameters the contract does not show (4 filters, deliverables.offset), e.g. projects.status=state,deliverables.offset=skip; `taxprep doctor` finds them'],
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

export function environmentTopic(): string {
  return `${SETTINGS_ORDER}

Environment variables:
${table(ENVIRONMENT_ROWS)}
`;
}

export function exitCodesTopic(): string {
  return `Exit codes (the same for every command; scripts and cron can branch on them):
${table(EXIT_CODE_MEANINGS.map(([code, meaning]) => [String(code), meaning]))}

With --json, a failure also prints the error as JSON on stderr: {"error":{"code":"...","message":"...","details":{...}}}
(as text when stderr is a terminal).
A stdout that cannot be written ends the command at its next line: 74 with one message (a full disk),
141 quietly when the reader went away; a login-link batch then stops sending, and its ledger keeps what it did.
`;
}
