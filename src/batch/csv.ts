/** One CSV record: its fields and the line (1-based) it starts on, for messages. */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = 'CsvSyntaxError';
  }
}

/**
 * RFC 4180 CSV: comma-separated, fields optionally in double quotes, `""` for a quote inside
 * quotes, a quoted field may span lines. Blank lines are skipped (spreadsheets leave them at the end).
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let fieldWasQuoted = false;
  let line = 1;
  let recordLine = 1;

  const endRecord = () => {
    fields.push(field);
    const blank = fields.length === 1 && fields[0] === '' && !fieldWasQuoted;
    if (!blank) records.push({ line: recordLine, fields });
    fields = [];
    field = '';
    fieldWasQuoted = false;
  };

  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"') {
        if (text[index + 1] === '"') {
          field += '"';
          index += 1;
        } else {
          quoted = false;
        }
      } else {
        if (char === '\n') line += 1;
        field += char;
      }
      continue;
    }
    if (char === '"') {
      if (field !== '') throw new CsvSyntaxError(line, 'a quote may only start a field ("..."); write "" for a quote inside a quoted field');
      quoted = true;
      fieldWasQuoted = true;
    } else if (char === ',') {
      fields.push(field);
      field = '';
      fieldWasQuoted = false;
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[index + 1] === '\n') index += 1;
      endRecord();
      line += 1;
      recordLine = line;
    } else {
      if (fieldWasQuoted) throw new CsvSyntaxError(line, 'unexpected text after a closing quote');
      field += char;
    }
  }
  if (quoted) throw new CsvSyntaxError(recordLine, 'a quoted field is not closed');
  // The last record, if the text does not end with a line end (if it does, this one is blank and dropped).
  endRecord();
  return records;
}
