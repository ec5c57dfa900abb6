/**
 * Resolves on the first SIGINT or SIGTERM, for a command whose normal end is being stopped (the
 * mock, `hooks listen`); a second signal then ends the process the default way.
 */
export function untilStopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
