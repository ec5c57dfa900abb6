import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The audit of every client-side rule (docs/contract-notes.md, "What the client refuses, and why"): each refusal
 * in src/commands and src/batch has a row saying where the rule comes from and what the client
 * does against a service whose rule is unknown. The source is walked: a refusal without a row,
 * or a row whose refusal is gone, fails here, naming it.
 */

/** The file that holds the audit table, from the repository root: change it here when the table moves. */
export const AUDIT_TABLE_FILE = 'docs/contract-notes.md';
/** The heading above the table in that file. */
export const AUDIT_TABLE_HEADING = 'What the client refuses, and why';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WALKED = ['src/commands', 'src/batch'];

/** Calls that refuse: a usage error, the helpers that make one, a file `docs sync` will not send, the upload's refusal of files. */
const REFUSAL = /\b(new UsageError|flagConflict|usageError|new SyncItemError|refuseFiles)\(/g;

export interface Refusal {
  file: string;
  line: number;
  /** The message's first words as written (up to the first interpolation or backtick), or the expression given: `(message)`. */
  head: string;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(join(ROOT, directory), { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Past the `${...}` that starts at `at` (nested braces and strings inside it included): the index after its `}`. */
function skipInterpolation(text: string, at: number): number {
  let depth = 0;
  for (let index = at; index < text.length; index += 1) {
    const char = text[index];
    if (char === '{') depth += 1;
    else if (char === '}' && --depth === 0) return index + 1;
  }
  return text.length;
}

/**
 * How a refusal is named in the table: the message's text with each interpolation as `…`, cut at
 * 60 characters; when the message is not a literal, the expression given, in parentheses:
 * `(message)`. Backticks read as quotes, so that the name fits in a code span.
 */
function headAt(text: string, at: number): string {
  let index = at;
  while (/\s/.test(text[index] ?? '')) index += 1;
  const quote = text[index];
  let head = '';
  if (quote === "'" || quote === '"' || quote === '`') {
    for (index += 1; index < text.length; index += 1) {
      const char = text[index]!;
      if (char === '\\') {
        head += text[index + 1] === 'n' ? ' ' : (text[index + 1] ?? '');
        index += 1;
      } else if (char === quote) break;
      else if (quote === '`' && char === '$' && text[index + 1] === '{') {
        head += '…';
        index = skipInterpolation(text, index + 1) - 1;
      } else head += char;
    }
  } else {
    let depth = 0;
    for (; index < text.length; index += 1) {
      const char = text[index]!;
      if (depth === 0 && (char === ',' || char === ')')) break;
      if (char === '$' && text[index + 1] === '{') {
        head += '…';
        index = skipInterpolation(text, index + 1) - 1;
        continue;
      }
      if (char === '(' || char === '{' || char === '[') depth += 1;
      if (char === ')' || char === '}' || char === ']') depth -= 1;
      head += char;
    }
    head = `(${head.trim()})`;
  }
  const cleaned = head.replace(/`/g, "'").replace(/\s+/g, ' ').replace(/…+/g, '…').trim();
  return cleaned.length > 60 ? `${cleaned.slice(0, 59).trimEnd()}…` : cleaned;
}

export function findRefusals(): Refusal[] {
  const refusals: Refusal[] = [];
  for (const file of WALKED.flatMap(sourceFiles).sort()) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(REFUSAL)) {
      // The definitions of the helpers are not refusals.
      const before = text.slice(Math.max(0, match.index - 9), match.index);
      if (before.endsWith('function ')) continue;
      refusals.push({ file: relative(ROOT, join(ROOT, file)), line: text.slice(0, match.index).split('\n').length, head: headAt(text, match.index + match[0].length) });
    }
  }
  return refusals;
}

export interface AuditRow {
  file: string;
  head: string;
  source: string;
  unknown: string;
}

/** The table's rows: `| src/... | \`head\` | source | against an unknown rule |`. */
export function readAuditTable(): AuditRow[] {
  const text = readFileSync(join(ROOT, AUDIT_TABLE_FILE), 'utf8');
  const start = text.indexOf(`## ${AUDIT_TABLE_HEADING}`);
  if (start < 0) throw new Error(`${AUDIT_TABLE_FILE} has no heading "## ${AUDIT_TABLE_HEADING}"`);
  const section = text.slice(start).split(/\n#{1,3} /)[0]!;
  const rows: AuditRow[] = [];
  for (const line of section.split('\n')) {
    const cells = /^\| (src\/\S+) \| `([^`]*)` \| (.+?) \| (.+?) \|$/.exec(line);
    if (cells) rows.push({ file: cells[1]!, head: cells[2]!, source: cells[3]!, unknown: cells[4]! });
  }
  return rows;
}

const key = (entry: { file: string; head: string }) => `${entry.file} \`${entry.head}\``;

describe('the audit table of client-side refusals', () => {
  const refusals = findRefusals();
  const rows = readAuditTable();

  it('finds the refusals it walks (the walk itself works)', () => {
    expect(refusals.length).toBeGreaterThan(50);
    expect(refusals).toContainEqual(expect.objectContaining({ file: 'src/commands/docs/upload.ts', head: 'nothing was uploaded: …' }));
    expect(refusals).toContainEqual(expect.objectContaining({ file: 'src/commands/parseFlags.ts', head: '(message)' }));
  });

  it('has a row for every refusal in src/commands and src/batch', () => {
    const listed = new Set(rows.map(key));
    const missing = refusals.filter((refusal) => !listed.has(key(refusal)));
    expect(
      missing.map((refusal) => `${refusal.file}:${refusal.line} refuses with \`${refusal.head}\` but ${AUDIT_TABLE_FILE} ("${AUDIT_TABLE_HEADING}") has no row | ${refusal.file} | \`${refusal.head}\` | <source> | <against an unknown rule> |`),
    ).toEqual([]);
  });

  it('has no row whose refusal is gone', () => {
    const found = new Set(refusals.map(key));
    expect(rows.filter((row) => !found.has(key(row))).map((row) => `${AUDIT_TABLE_FILE} lists ${key(row)}, which no longer refuses anything: remove the row`)).toEqual([]);
  });

  it('says for every row where the rule comes from and what happens against a service whose rule is unknown', () => {
    const sources = /^(contract|local|contract and local|mock|learned or profile)$/;
    expect(rows.filter((row) => !sources.test(row.source)).map(key)).toEqual([]);
    expect(rows.filter((row) => row.unknown.trim().length < 4).map(key)).toEqual([]);
  });
});
