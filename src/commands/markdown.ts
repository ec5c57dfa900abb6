import { blocksOf, type Block } from '../help/blocks';
import { exampleLines, usageLines } from '../help/layout';
import { HELP_TOPICS } from '../help/topics';
import type { HelpTopic } from '../help/register';
import { exitCodesOf } from './exitCodes';
import { flagHelp, HELP_FLAG, longName, walk, type CommandSpec } from './spec';

/**
 * The command reference in docs/commands/ (`npm run docs`), made from the same declarations and
 * the same pieces as `--help` and the man pages (usage lines, flag help, notes and topics as
 * blocks): one page a command, `taxprep-docs-upload.md`, a noun that groups subcommands included;
 * one page a help topic, `topic-exit-codes.md`; and README.md, the index.
 * test/cli/docs-drift.test.ts fails while the checked-in pages and the declarations disagree.
 */
export interface MarkdownPage {
  /** `taxprep-docs-upload.md`, relative to docs/commands/. */
  file: string;
  text: string;
}

export const GENERATED_MARK = '<!-- Generated from the command declarations (src/commands) by `npm run docs`; do not edit. -->';

function pageFile(path: readonly string[]): string {
  return `${['taxprep', ...path].join('-')}.md`;
}

function topicFile(topic: string): string {
  return `topic-${topic}.md`;
}

/** Markdown's own characters outside code spans made literal: `<fields>` is not an HTML tag. */
function inline(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/[\\*<>[\]]/g, (character) => `\\${character}`)))
    .join('');
}

function cell(text: string): string {
  return inline(text).replace(/\|/g, '\\|');
}

function code(term: string): string {
  return `\`${term}\``;
}

function fence(language: string, lines: readonly string[]): string {
  return ['```' + language, ...lines, '```'].join('\n');
}

function table(headings: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(headings), `|${headings.map(() => '---|').join('')}`, ...rows.map(line)].join('\n');
}

/** Help blocks as markdown: paragraphs on one line each (the reader's viewer wraps them), lists and code kept. */
export function markdownBlocks(blocks: readonly Block[]): string {
  return blocks
    .map((block) => {
      switch (block.kind) {
        case 'paragraph':
          return inline(block.text);
        case 'verbatim': {
          const lines = block.text.split('\n');
          const indent = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length));
          return fence('text', lines.map((line) => line.slice(indent)));
        }
        case 'steps':
          return block.items.map((item, index) => `${index + 1}. ${inline(item)}`).join('\n');
        case 'rows':
          return table(['Name', 'Meaning'], block.rows.map(([term, text]) => [code(term), cell(text)]));
      }
    })
    .join('\n\n');
}

function section(title: string, body: string | undefined): string[] {
  return body === undefined || body === '' ? [] : [`## ${title}`, body];
}

/** A link to a command's page; `taxprep` itself is the index. */
function link(path: readonly string[]): string {
  return `[${['taxprep', ...path].join(' ')}](${path.length === 0 ? 'README.md' : pageFile(path)})`;
}

/** The codes the command can end with, and what each means there; the topic page has them all. */
function exitCodeTable(spec: CommandSpec): string {
  const rows = exitCodesOf(spec).map((row) => [String(row.code), code(row.name), cell(row.meaning)]);
  return `${table(['Code', 'Name', 'Meaning'], rows)}\n\nEvery code and the JSON error shape: [exit codes](${topicFile('exit-codes')}).`;
}

function commandPage(root: CommandSpec, path: readonly string[], spec: CommandSpec): MarkdownPage {
  const subcommands = (spec.subcommands ?? []).filter((sub) => !sub.hidden);
  const inherited = [HELP_FLAG, ...(root.flags ?? [])].map(longName).filter((name) => !(spec.flags ?? []).some((flag) => longName(flag) === name));
  const parts = [
    GENERATED_MARK,
    `# ${['taxprep', ...path].join(' ')}`,
    inline(spec.description),
    ...section('Usage', fence('', usageLines(['taxprep', ...path].join(' '), spec))),
    ...section('Commands', subcommands.length === 0 ? undefined : table(['Command', 'What it does'], subcommands.map((sub) => [link([...path, sub.name]), cell(sub.description)]))),
    ...section(
      'Arguments',
      spec.arguments?.length ? table(['Argument', 'Meaning'], spec.arguments.map((argument) => [code(argument.name), cell(argument.values ? `${argument.help}: ${argument.values.join(', ')}` : argument.help)])) : undefined,
    ),
    ...section('Flags', spec.flags?.length ? table(['Flag', 'Meaning'], spec.flags.map((flag) => [code(flag.flag), cell(flagHelp(flag))])) : undefined),
    ...section('Inherited flags', `${inherited.map(code).join(', ')}: see [the flags every command takes](${topicFile('flags')}).`),
    ...section('Examples', spec.examples?.length ? fence('console', exampleLines(spec.examples, 80)) : undefined),
    ...section('JSON fields', spec.jsonFields ? `\`--json FIELD,...\` may select: ${spec.jsonFields.map(code).join(', ')}.` : undefined),
    ...section('Notes', spec.notes === undefined ? undefined : markdownBlocks(blocksOf(spec.notes))),
    ...section('Exit codes', exitCodeTable(spec)),
    ...section('See also', [path.slice(0, -1), ...subcommands.map((sub) => [...path, sub.name])].map(link).join(', ')),
  ];
  return { file: pageFile(path), text: `${parts.join('\n\n')}\n` };
}

function topicPage(name: HelpTopic): MarkdownPage {
  const topic = HELP_TOPICS[name];
  const parts = [GENERATED_MARK, `# ${topic.title}`, `\`taxprep help ${name}\` prints the same.`, markdownBlocks(topic.blocks())];
  return { file: topicFile(name), text: `${parts.join('\n\n')}\n` };
}

function indexPage(root: CommandSpec): MarkdownPage {
  const commands = walk(root).slice(1);
  const parts = [
    GENERATED_MARK,
    '# Command reference',
    inline(root.description),
    `Every command, as \`taxprep COMMAND --help\` and \`man taxprep-COMMAND\` show it. The guides are listed in [docs/README.md](../README.md).`,
    ...section('Commands', table(['Command', 'What it does'], commands.map(({ path, spec }) => [link(path), cell(spec.description)]))),
    ...section('Help topics', table(['Topic', 'What it covers'], (Object.keys(HELP_TOPICS) as HelpTopic[]).map((name) => [`[${name}](${topicFile(name)})`, cell(HELP_TOPICS[name].title)]))),
  ];
  return { file: 'README.md', text: `${parts.join('\n\n')}\n` };
}

/** Every page of docs/commands/: the index first, then the commands in tree order, then the topics. */
export function markdownPages(root: CommandSpec): MarkdownPage[] {
  return [
    indexPage(root),
    ...walk(root).slice(1).map(({ path, spec }) => commandPage(root, path, spec)),
    ...(Object.keys(HELP_TOPICS) as HelpTopic[]).map(topicPage),
  ];
}
