import type { Writable } from 'node:stream';
import { OutputError } from '../errors';

/**
 * Writes and waits for the stream to drain when its buffer is full, so that a long listing piped
 * into a slow reader keeps memory flat instead of queueing every line. A stream that failed (a
 * full disk, a reader gone) rejects with `OutputError`, here and in every later call, so that a
 * command stops at its next line instead of working on for no reader.
 */
export function writeText(stream: Writable, text: string): Promise<void> {
  if (stream.errored !== null) return Promise.reject(new OutputError(stream.errored));
  if (text.length === 0 || stream.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const cleanUp = () => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onDrain);
    };
    const onDrain = () => {
      cleanUp();
      if (stream.errored === null) resolve();
      else reject(new OutputError(stream.errored));
    };
    const onError = (error: Error) => {
      cleanUp();
      reject(new OutputError(error));
    };
    stream.once('drain', onDrain);
    stream.once('error', onError);
    stream.once('close', onDrain);
  });
}

/**
 * Resolves once what was written to `stream` so far has been handed on, with the failure that
 * stopped it if one did (failures of a synchronous write are only emitted on the next tick).
 */
export function outputFailure(stream: Writable): Promise<OutputError | undefined> {
  const failure = () => (stream.errored === null ? undefined : new OutputError(stream.errored));
  if (stream.errored !== null || stream.destroyed) return Promise.resolve(failure());
  return new Promise((resolve) => stream.write('', (error) => resolve(failure() ?? (error ? new OutputError(error) : undefined))));
}
