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
  for (const word of words) {
    const next = command.commands.find((candidate) => candidate.name() === word || candidate.aliases().includes(word));
    if (next === undefined) {
      const known = [...Object.keys(HELP_TOPICS), ...program.commands.map((candidate) => candidate.name())];
      throw new UsageError(`no help topic or command "${words.join(' ')}"`, { hint: `Topics and commands: ${known.join(', ')}` });
    }
    command = next;
  }
  command.outputHelp();
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
  [ENVIRONMENT_VARIABLES.queryParameters, 'names of the filters the contract does not show, e.g. projects.status=state,deliverables.account_id=account'],
  ['HTTPS_PROXY, HTTP_PROXY', 'proxy for https:// and http:// service addresses (lower-case names too)'],
  ['NO_PROXY', 'hosts reached directly, comma-separated (e.g. localhost,.internal)'],
  ['XDG_CONFIG_HOME', 'profiles live in $XDG_CONFIG_HOME/taxprep/profiles.json (default ~/.config)'],
  ['XDG_DATA_HOME', 'the login-link ledger lives in $XDG_DATA_HOME/taxprep (default ~/.local/share)'],
  ['XDG_CACHE_HOME', 'compiled code is kept between runs in $XDG_CACHE_HOME/taxprep/compiled (default ~/.cache)'],
  ['NODE_DISABLE_COMPILE_CACHE', 'any non-empty value: no compiled-code cache is read or written'],
  ['NO_COLOR', 'any non-empty value turns colour off'],
  ['FORCE_COLOR', 'turns colour on even in a pipe (except FORCE_COLOR=0)'],
  ['TERM=dumb', 'turns colour off'],
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

With --json, a failure also prints the error as JSON on stderr: {"error":{"code":"...","message":"...","details":{...}}}.
`;
}
