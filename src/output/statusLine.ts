import type { Writable } from 'node:stream';

/**
 * A note about work in progress that the next one replaces (retry notes): on a terminal one line,
 * rewritten in place and ended when the work is over; in a log or a pipe, a line each, so that a
 * cron mail keeps the whole story.
 */
export interface StatusLine {
  show(text: string): void;
  /** The work is over: a line shown in place is ended, so later output starts on a line of its own. */
  end(): void;
}

/** Carriage return, then erase the line: the cursor is back at its start. */
const REWRITE = '\r\u001b[2K';

export function createStatusLine(stream: Writable, inPlace: boolean, columns: number): StatusLine {
  if (!inPlace) return { show: (text) => void stream.write(`${text}\n`), end: () => undefined };
  let open = false;
  return {
    show(text) {
      // Cut to the width: a line that wrapped could not be rewritten by returning to its start.
      stream.write(`${REWRITE}${text.slice(0, Math.max(1, columns - 1))}`);
      open = true;
    },
    end() {
      if (open) stream.write('\n');
      open = false;
    },
  };
}
