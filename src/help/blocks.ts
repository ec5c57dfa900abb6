import { wrapText } from '../output/wrap';

/**
 * Help text written once and rendered three ways: to the terminal (`--help`, `taxprep help
 * TOPIC`), to roff (man/) and to markdown (docs/commands/). Prose is a paragraph that each
 * renderer wraps to its own width, never a hard-broken line; what must keep its lines (lists of
 * values, code) says so.
 */
export type Block =
  /** Running text: wrapped to the terminal, filled by man, one line in markdown. */
  | { kind: 'paragraph'; text: string }
  /** Lines kept as written (a list of event names, a JSON shape, a command). */
  | { kind: 'verbatim'; text: string }
  /** Numbered steps, each wrapped under its own text. */
  | { kind: 'steps'; items: readonly string[] }
  /** Terms and what they mean (a variable, an exit code, a flag), each text wrapped under itself. */
  | { kind: 'rows'; rows: ReadonlyArray<readonly [term: string, text: string]> };

/**
 * A command's notes as blocks: unindented lines run together into a paragraph (a blank line ends
 * it), indented lines are kept as written. Declarations may break their source lines anywhere.
 */
export function blocksOf(text: string): Block[] {
  const blocks: Block[] = [];
  let prose: string[] = [];
  let kept: string[] = [];
  const flush = () => {
    if (prose.length > 0) blocks.push({ kind: 'paragraph', text: prose.join(' ') });
    if (kept.length > 0) blocks.push({ kind: 'verbatim', text: kept.join('\n') });
    prose = [];
    kept = [];
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') flush();
    else if (/^\s/.test(line)) {
      if (prose.length > 0) flush();
      kept.push(line);
    } else {
      if (kept.length > 0) flush();
      prose.push(line.trim());
    }
  }
  flush();
  return blocks;
}

/** `text` wrapped to `width`, its first line after `first` and the others under it. */
function hanging(first: string, text: string, width: number): string {
  const indent = ' '.repeat(first.length);
  return wrapText(text, Math.max(20, width - first.length))
    .split('\n')
    .map((line, index) => `${index === 0 ? first : indent}${line}`.trimEnd())
    .join('\n');
}

/**
 * Lines kept as written where they fit; a longer one (a list of names) continues on the next
 * line under its own text, two columns in, so that no line runs past the width.
 */
export function wrapVerbatim(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      const indent = /^ */.exec(line)![0];
      if (line.length <= width) return line;
      const pieces = wrapText(line.trimStart(), Math.max(20, width - indent.length - 2)).split('\n');
      return pieces.map((piece, index) => `${indent}${index === 0 ? '' : '  '}${piece}`).join('\n');
    })
    .join('\n');
}

/** Blocks as the terminal shows them, `width` columns wide; blocks are separated by a blank line. */
export function terminalText(blocks: readonly Block[], width: number): string {
  return blocks
    .map((block) => {
      switch (block.kind) {
        case 'paragraph':
          return wrapText(block.text, width);
        case 'verbatim':
          return wrapVerbatim(block.text, width);
        case 'steps':
          return block.items.map((item, index) => hanging(`  ${index + 1}. `, item, width)).join('\n');
        case 'rows': {
          const termWidth = Math.max(...block.rows.map(([term]) => term.length));
          // A term too long to keep a readable column beside it gets its text on the next line.
          if (termWidth > width / 3) return block.rows.map(([term, text]) => `  ${term}\n${hanging('      ', text, width)}`).join('\n');
          return block.rows.map(([term, text]) => hanging(`  ${term.padEnd(termWidth)}  `, text, width)).join('\n');
        }
      }
    })
    .join('\n\n');
}
