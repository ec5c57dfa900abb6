import type { Writable } from 'node:stream';
import type { Clock, Context } from '../types';
import { formatDuration } from '../lib/duration';
import { formatBytes, progressBar } from '../output/progress';
import { sanitizeLine } from '../output/sanitize';
import { truncate } from '../output/table';
import { formatWaiting } from './progress';

/**
 * Progress of a set of file uploads (`docs upload`, `docs sync`): bytes, rate and time left for
 * each file in flight and for the whole set.
 *
 * - `terminal`: lines redrawn in place on stderr (each file in flight, then the set when it has
 *   more than one file), cut to the terminal's width (a wider line would wrap and scroll on every
 *   redraw), redrawn at most every 100 ms.
 * - `lines`: a log or a pipe: never a carriage return, one line per file as it ends.
 * - `off`: nothing (`--json`, or the caller prints its own line per file).
 */
export type ProgressMode = 'terminal' | 'lines' | 'off';

export interface FileSetProgressOptions {
  stream: Writable;
  mode: ProgressMode;
  /** Display columns of the stream; lines stay narrower. */
  columns: number;
  /** Display width of a text, as the tables measure it (a CJK name takes two columns a character). */
  width: (text: string) => number;
  clock: Clock;
  /** Files and bytes of the whole set, as far as they are known when it starts. */
  files: number;
  bytes: number;
  /** On a terminal, leave a finished file's line above the others (`docs upload`); else it just goes. */
  keepFinished: boolean;
}

export interface FileProgress {
  /** Bytes of this file sent so far. */
  sent(bytes: number): void;
  /** The file was stored. */
  done(): void;
  /** The file did not go: its line is wiped, leaving nothing stale above an error. */
  failed(): void;
}

export interface FileSetProgress {
  start(name: string, size: number): FileProgress;
  /** Requests wait for the key's rate-limit window until `untilMs` (local ms), or go again (undefined): the set's line says so. */
  waiting(untilMs: number | undefined): void;
  /** Wipes the lines so that other output starts at the left margin; the next update redraws them. */
  clear(): void;
  finish(): void;
}

const REDRAW_EVERY_MS = 100;
/** A name cut shorter than this no longer tells files apart: the figures give way first. */
const MIN_NAME_COLUMNS = 16;
const CLEAR_LINE = '\r\u001b[K';
const LINE_UP = '\u001b[1A';

/** `2.0 MB/s`, or undefined before anything measurable happened. */
export function formatByteRate(bytes: number, elapsedMs: number): string | undefined {
  if (bytes <= 0 || elapsedMs <= 0) return undefined;
  return `${formatBytes((bytes * 1000) / elapsedMs)}/s`;
}

/**
 * The figures of a transfer, fullest first, for the line to take the first that leaves the name
 * room: `██░░ 45%  1.2 MB of 2.6 MB  3.1 MB/s  1s left`, then without the bar, then without the
 * bytes; time left is at the average rate so far.
 */
export function transferFigures(sent: number, total: number, elapsedMs: number): string[] {
  const percent = total === 0 ? 100 : Math.floor((sent / total) * 100);
  const rate = formatByteRate(sent, elapsedMs);
  const speed = rate === undefined ? '-/s' : `${rate}  ${formatDuration(Math.ceil(((total - sent) * elapsedMs) / sent / 1000) * 1000)} left`;
  const bytes = `${formatBytes(sent)} of ${formatBytes(total)}`;
  return [`${progressBar(percent)}  ${bytes}  ${speed}`, `${String(percent).padStart(3)}%  ${bytes}  ${speed}`, `${String(percent).padStart(3)}%  ${speed}`];
}

/** `2.6 MB in 1.2s (2.1 MB/s)`: what a finished file took. */
export function formatFinished(bytes: number, elapsedMs: number): string {
  const rate = formatByteRate(bytes, elapsedMs);
  return `${formatBytes(bytes)} in ${formatDuration(elapsedMs)}${rate === undefined ? '' : ` (${rate})`}`;
}

interface Active {
  name: string;
  size: number;
  sent: number;
  startedMs: number;
}

export function createFileSetProgress(options: FileSetProgressOptions): FileSetProgress {
  if (options.mode === 'off') {
    const quiet: FileProgress = { sent() {}, done() {}, failed() {} };
    return { start: () => quiet, waiting() {}, clear() {}, finish() {} };
  }
  const { stream, clock } = options;
  const nowMs = () => clock.now().getTime();
  const setStartedMs = nowMs();
  const set = { files: options.files, bytes: options.bytes, doneFiles: 0, doneBytes: 0 };
  const active = new Set<Active>();
  let drawnLines = 0;
  let drawnAtMs = -Infinity;
  let waitingUntilMs: number | undefined;

  // The name takes what the figures leave, keeping at least a few characters of it: narrower
  // figures are taken first, and a terminal too narrow even for those gets the line cut.
  const fit = (name: string, figures: string[]) => {
    const shown = sanitizeLine(name);
    const wanted = Math.min(options.width(shown), MIN_NAME_COLUMNS);
    const rest = figures.find((candidate) => options.columns - 2 - options.width(candidate) >= wanted) ?? figures.at(-1)!;
    const line = `${truncate(shown, Math.max(1, options.columns - 2 - options.width(rest)), options.width)} ${rest}`;
    return truncate(line, options.columns - 1, options.width);
  };
  const fileLine = (file: Active) => fit(file.name, transferFigures(file.sent, file.size, nowMs() - file.startedMs));
  const setLine = () => {
    const sent = set.doneBytes + [...active].reduce((sum, file) => sum + file.sent, 0);
    const name = `${set.doneFiles} of ${set.files} files`;
    // During a wait the set's rate and time left would be untrue: it says it waits, and until when.
    if (waitingUntilMs !== undefined) return fit(name, [formatWaiting(waitingUntilMs)]);
    return fit(name, transferFigures(sent, set.bytes, nowMs() - setStartedMs));
  };

  const clear = () => {
    if (drawnLines === 0) return;
    stream.write(CLEAR_LINE + `${LINE_UP}${CLEAR_LINE}`.repeat(drawnLines - 1));
    drawnLines = 0;
  };
  const draw = (force: boolean) => {
    if (options.mode !== 'terminal') return;
    if (!force && nowMs() - drawnAtMs < REDRAW_EVERY_MS) return;
    const lines = [...active].map(fileLine);
    if (set.files > 1 || waitingUntilMs !== undefined) lines.push(setLine());
    clear();
    if (lines.length === 0) return;
    stream.write(lines.join('\n'));
    drawnLines = lines.length;
    drawnAtMs = nowMs();
  };

  return {
    start(name, size) {
      const file: Active = { name, size, sent: 0, startedMs: nowMs() };
      active.add(file);
      draw(true);
      let ended = false;
      const end = () => {
        ended = true;
        active.delete(file);
      };
      return {
        sent(bytes) {
          if (ended) return;
          file.sent = bytes;
          draw(false);
        },
        done() {
          if (ended) return;
          end();
          set.doneFiles += 1;
          set.doneBytes += file.size;
          const elapsedMs = nowMs() - file.startedMs;
          if (options.mode === 'lines') {
            stream.write(`${sanitizeLine(name)}: ${formatFinished(size, elapsedMs)}\n`);
            return;
          }
          clear();
          if (options.keepFinished) stream.write(`${fit(name, [`${progressBar(100)}  ${formatFinished(size, elapsedMs)}`, formatFinished(size, elapsedMs)])}\n`);
          draw(true);
        },
        failed() {
          if (ended) return;
          end();
          draw(true);
        },
      };
    },
    waiting(untilMs) {
      waitingUntilMs = untilMs;
      draw(true);
    },
    clear,
    finish: clear,
  };
}

/**
 * The progress of a set of uploads for this command's streams: redrawn on a terminal's stderr,
 * a line per file in a log (or nothing, when `lines` is false because the caller prints its own),
 * nothing under `--json`.
 */
export async function openFileSetProgress(ctx: Context, set: { files: number; bytes: number; keepFinished: boolean; lines?: boolean }): Promise<FileSetProgress> {
  const mode: ProgressMode = ctx.globals.json ? 'off' : ctx.io.stderrIsTTY ? 'terminal' : set.lines === false ? 'off' : 'lines';
  if (mode === 'off') return createFileSetProgress({ ...set, mode, stream: ctx.io.stderr, columns: 0, width: (text) => text.length, clock: ctx.clock });
  const { default: stringWidth } = await import('string-width');
  // Drawn on stderr, whose width may differ from stdout's (`| less`, `> file`); a terminal that
  // reports no size (0) gets the usual default.
  const reported = (ctx.io.stderr as { columns?: number }).columns;
  const columns = reported !== undefined && reported > 0 ? reported : ctx.io.columns;
  return createFileSetProgress({ ...set, mode, stream: ctx.io.stderr, columns, width: stringWidth, clock: ctx.clock });
}
