import { blocksOf, wrapVerbatim, type Block } from '../help/blocks';
import { exampleLines } from '../help/layout';
import { HELP_TOPICS } from '../help/topics';
import { ACCOUNTS_FILE_NAME, DOCUMENTS_FILE_NAME, LOGIN_LINKS_FILE_NAME } from '../batch/ledgers/fileNames';
import { exitCodesOf } from './exitCodes';
import { flagHelp, HELP_FLAG, longName, walk, type CommandSpec, type FlagSpec } from './spec';

/**
 * The man pages, made from the same declarations as `--help`, the completions and the
 * command reference (`npm run docs` writes them to man/): taxprep(1) for the program, with its
 * environment, exit codes and files, and one page a command, `taxprep-docs-upload(1)`, for
 * every visible command, a noun that groups subcommands included.
 */
export interface ManPage {
  /** `taxprep-docs-upload.1`. */
  file: string;
  text: string;
}

/** Room for an example or a list under `man` at 80 columns: its margin of 7 and the 4 of `preformatted`. */
const MAN_EXAMPLE_WIDTH = 80 - 7 - 4;

/** The files taxprep keeps, by what each holds. */
const FILES: ReadonlyArray<[string, string]> = [
  ['$XDG_CONFIG_HOME/taxprep/profiles.json', 'stored profiles: base URL and API key of each (mode 0600). Default ~/.config/taxprep/profiles.json.'],
  [`$XDG_DATA_HOME/taxprep/${LOGIN_LINKS_FILE_NAME}`, 'the login-link ledger: every link created (never the link itself), for renewal from cron (mode 0600). Default ~/.local/share/taxprep.'],
  [`$XDG_DATA_HOME/taxprep/${ACCOUNTS_FILE_NAME}`, 'the accounts ledger: accounts created by accounts create and accounts import, so that an import resumes without duplicates (mode 0600).'],
  [`$XDG_DATA_HOME/taxprep/${DOCUMENTS_FILE_NAME}`, 'the documents ledger: files docs sync uploaded, by content hash, so that a sync uploads only what is missing (mode 0600).'],
  ['$XDG_DATA_HOME/taxprep/*.lock', 'the lock of the ledger beside it, held by the one batch run that writes it.'],
  ['$XDG_CACHE_HOME/taxprep/compiled/', 'compiled code kept between runs to start faster; safe to delete. Default ~/.cache/taxprep.'],
];

/**
 * Text as roff reads it: backslashes escaped, a line that would start with a control character
 * guarded, and every hyphen a minus sign, so that flags and commands copied from a terminal work.
 */
function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    // groff reads its input as Latin-1: other characters (`…`) by their code point.
    .replace(/[^\x00-\x7f]/gu, (character) => `\\[u${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`)
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1');
}

function pageName(path: readonly string[]): string {
  return ['taxprep', ...path].join('-');
}

function reference(path: readonly string[]): string {
  return `\\fB${roff(pageName(path))}\\fR(1)`;
}

/** A tagged paragraph: the term in bold, then its text indented. */
function item(term: string, text: string): string[] {
  return ['.TP', term, roff(text)];
}

function flagItems(flags: readonly FlagSpec[]): string[] {
  return flags.flatMap((flag) => {
    const [names, value] = flag.flag.split(/ (?=[<[])/);
    return item(`\\fB${roff(names!)}\\fR${value === undefined ? '' : ` \\fI${roff(value)}\\fR`}`, flagHelp(flag));
  });
}

/** Text kept as written, line for line (examples, lists), its common indentation left to man. */
function preformatted(text: string): string[] {
  const lines = text.split('\n');
  const indent = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length));
  return ['.PP', '.RS 4', '.nf', ...lines.map((line) => roff(line.slice(indent))), '.fi', '.RE'];
}

/** Help blocks as roff: paragraphs filled by man to its width, lists and code kept as written. */
function roffBlocks(blocks: readonly Block[]): string[] {
  return blocks.flatMap((block) => {
    switch (block.kind) {
      case 'paragraph':
        return ['.PP', roff(block.text)];
      case 'verbatim':
        return preformatted(wrapVerbatim(block.text, MAN_EXAMPLE_WIDTH));
      case 'steps':
        return block.items.flatMap((text, index) => [`.IP ${index + 1}. 4`, roff(text)]);
      case 'rows':
        return block.rows.flatMap(([term, text]) => item(`\\fB${roff(term)}\\fR`, text));
    }
  });
}

/** A help topic as the body of a section of taxprep(1). */
function topicSection(title: string, topic: keyof typeof HELP_TOPICS): string[] {
  return [`.SH ${title}`, ...roffBlocks(HELP_TOPICS[topic].blocks())];
}

function section(title: string, lines: string[]): string[] {
  return lines.length === 0 ? [] : [`.SH ${title}`, ...lines];
}

function synopsis(path: readonly string[], spec: CommandSpec): string {
  const words = ['taxprep', ...path].map((word) => `\\fB${roff(word)}\\fR`);
  if (spec.load === undefined) return [...words, '\\fIcommand\\fR', '[\\fIoptions\\fR]'].join(' ');
  return [...words, '[\\fIoptions\\fR]', ...(spec.arguments ?? []).map((argument) => `\\fI${roff(argument.name)}\\fR`)].join(' ');
}

function header(path: readonly string[], version: string, summary: string): string[] {
  return [
    ".\\\" Generated from the command declarations (src/commands) by `npm run completions`; do not edit.",
    `.TH "${roff(pageName(path).toUpperCase())}" "1" "" "taxprep ${roff(version)}" "taxprep manual"`,
    // Left-aligned, no hyphenation: names such as TAXPREP_MAX_RESPONSE_SIZE stay whole, to be copied.
    '.ad l',
    '.nh',
    '.SH NAME',
    `${roff(pageName(path))} \\- ${roff(summary)}`,
  ];
}

function commandPage(root: CommandSpec, path: readonly string[], spec: CommandSpec, version: string): ManPage {
  const subcommands = (spec.subcommands ?? []).filter((sub) => !sub.hidden);
  const related = [path.slice(0, -1), ...subcommands.map((sub) => [...path, sub.name])];
  const lines = [
    ...header(path, version, spec.description),
    '.SH SYNOPSIS',
    synopsis(path, spec),
    '.SH DESCRIPTION',
    roff(spec.description),
    ...section('COMMANDS', subcommands.flatMap((sub) => item(reference([...path, sub.name]), sub.description))),
    ...section('ARGUMENTS', (spec.arguments ?? []).flatMap((argument) => item(`\\fI${roff(argument.name)}\\fR`, argument.values ? `${argument.help}: ${argument.values.join(', ')}` : argument.help))),
    ...section('OPTIONS', flagItems(spec.flags ?? [])),
    // Accepted before or after any command: the program's own flags, listed once in taxprep(1).
    '.SH GLOBAL OPTIONS',
    `${roff([HELP_FLAG, ...(root.flags ?? [])].map(longName).join(', '))} and the other flags of \\fBtaxprep\\fR(1), OPTIONS (also \\fBtaxprep help flags\\fR).`,
    ...section('JSON FIELDS', spec.jsonFields ? ['Fields \\fB\\-\\-json\\fR \\fIfield\\fR,... may select:', roff(spec.jsonFields.join(', '))] : []),
    '.SH EXIT STATUS',
    ...exitCodesOf(spec).flatMap(({ code, meaning }) => item(`\\fB${code}\\fR`, meaning)),
    '.PP',
    'Every code, and the error printed with \\fB\\-\\-json\\fR: \\fBtaxprep\\fR(1), EXIT STATUS (also \\fBtaxprep help exit\\-codes\\fR).',
    ...section('EXAMPLES', spec.examples?.length ? preformatted(exampleLines(spec.examples, MAN_EXAMPLE_WIDTH).join('\n')) : []),
    ...section('NOTES', spec.notes === undefined ? [] : roffBlocks(blocksOf(spec.notes))),
    '.SH SEE ALSO',
    related.map(reference).join(', '),
  ];
  return { file: `${pageName(path)}.1`, text: `${lines.join('\n')}\n` };
}

function programPage(root: CommandSpec, version: string): ManPage {
  const commands = walk(root).filter(({ path, spec }) => path.length > 0 && spec.load !== undefined);
  const lines = [
    ...header([], version, root.description),
    '.SH SYNOPSIS',
    '\\fBtaxprep\\fR \\fIcommand\\fR [\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    roff(root.description),
    'Each command has a page of its own, named by its words: \\fBman taxprep\\-docs\\-upload\\fR.',
    '.SH COMMANDS',
    ...commands.flatMap(({ path, spec }) => item(reference(path), spec.description)),
    ...topicSection('OPTIONS', 'flags'),
    ...topicSection('OUTPUT', 'formatting'),
    ...topicSection('ENVIRONMENT', 'environment'),
    ...topicSection('EXIT STATUS', 'exit-codes'),
    '.SH FILES',
    ...FILES.flatMap(([path, text]) => item(`\\fI${roff(path)}\\fR`, text)),
    ...section('EXAMPLES', root.examples?.length ? preformatted(exampleLines(root.examples, MAN_EXAMPLE_WIDTH).join('\n')) : []),
    '.SH SEE ALSO',
    (root.subcommands ?? []).filter((sub) => !sub.hidden).map((sub) => reference([sub.name])).join(', '),
  ];
  return { file: 'taxprep.1', text: `${lines.join('\n')}\n` };
}

/** Every page, taxprep(1) first. */
export function manPages(root: CommandSpec, version: string): ManPage[] {
  return [programPage(root, version), ...walk(root).slice(1).map(({ path, spec }) => commandPage(root, path, spec, version))];
}
