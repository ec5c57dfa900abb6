// One line saying why a command run by bin/release.js or bin/pinnedNode.js failed, for a message
// that names the cause without the command's stack trace.

/**
 * The first line of the failed command's stderr that says what went wrong: npm's `npm error `
 * prefix dropped, and neither its `code`/`syscall`/`errno` lines nor stack frames (`at ...`);
 * the error's own message when the command said nothing (it could not be started, say).
 */
export function commandFailure(error) {
  const lines = String(error.stderr ?? '')
    .split('\n')
    .map((line) => line.replace(/^npm (error|ERR!)\s?/, '').trim())
    .filter((line) => line !== '' && !/^at\s/.test(line) && !/^(code|syscall|errno)\s/.test(line));
  return lines.find((line) => /error/i.test(line)) ?? lines[0] ?? String(error.message).split('\n')[0];
}
