import type { Writable } from 'node:stream';
import type { Clock } from '../types';
import { formatDuration } from '../lib/duration';

export interface Progress {
  /** Removes the line so that other output starts at the left margin. */
  clear(): void;
  /** One more item finished: the line is redrawn with the new count. */
  advance(): void;
  /** Requests wait for the key's rate-limit window until `untilMs` (local ms), or go again (undefined). */
  waiting(untilMs: number | undefined): void;
  finish(): void;
}

/** `waiting for the rate limit until 11:02:07 UTC`: what a line says instead of a rate and a time left during a wait. */
export function formatWaiting(untilMs: number): string {
  return `waiting for the rate limit until ${new Date(untilMs).toISOString().slice(11, 19)} UTC`;
}

/** `  120/300  40%  24.5/s  ETA 7s`: the average rate so far, and the time left at that rate. */
export function formatProgress(done: number, total: number, elapsedMs: number, waitingUntilMs?: number): string {
  const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
  if (waitingUntilMs !== undefined) return `  ${done}/${total}  ${percent}%  ${formatWaiting(waitingUntilMs)}`;
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const eta = rate > 0 ? formatDuration(Math.ceil((total - done) / rate) * 1000) : '?';
  return `  ${done}/${total}  ${percent}%  ${formatRate(done, elapsedMs) ?? '-/s'}  ETA ${eta}`;
}

/**
 * `24.5/s`, or `7.5/min` below one a second (a batch paced to a per-minute limit, or one that
 * waited): never `0.0/s` for something that happened. Undefined when nothing happened yet.
 */
export function formatRate(count: number, elapsedMs: number): string | undefined {
  if (count === 0 || elapsedMs <= 0) return undefined;
  const perSecond = (count * 1000) / elapsedMs;
  if (perSecond >= 1) return `${perSecond.toFixed(1)}/s`;
  const perMinute = perSecond * 60;
  return perMinute >= 1 ? `${perMinute.toFixed(1)}/min` : `${(perMinute * 60).toFixed(1)}/h`;
}

/** A progress line on a terminal's stderr; `enabled` false (a pipe, `--json`) makes every call a no-op. */
export function createProgress(stream: Writable, options: { enabled: boolean; total: number; clock: Clock }): Progress {
  if (!options.enabled) return { clear() {}, advance() {}, waiting() {}, finish() {} };
  const startedMs = options.clock.now().getTime();
  let done = 0;
  let waitingUntilMs: number | undefined;
  let shown = false;
  const clear = () => {
    if (shown) stream.write('\r\x1b[K');
    shown = false;
  };
  const draw = () => {
    stream.write(`\r\x1b[K${formatProgress(done, options.total, options.clock.now().getTime() - startedMs, waitingUntilMs)}`);
    shown = true;
  };
  return {
    clear,
    advance() {
      done += 1;
      draw();
    },
    waiting(untilMs) {
      waitingUntilMs = untilMs;
      draw();
    },
    finish: clear,
  };
}
