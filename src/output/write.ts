import type { Writable } from 'node:stream';

/**
 * Writes and waits for the stream to drain when its buffer is full, so that a long listing piped
 * into a slow reader keeps memory flat instead of queueing every line.
 */
export function writeText(stream: Writable, text: string): Promise<void> {
  if (text.length === 0 || stream.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const cleanUp = () => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onDrain);
    };
    const onDrain = () => {
      cleanUp();
      resolve();
    };
    const onError = (error: Error) => {
      cleanUp();
      reject(error);
    };
    stream.once('drain', onDrain);
    stream.once('error', onError);
    stream.once('close', onDrain);
  });
}
