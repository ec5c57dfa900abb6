import type { Writable } from 'node:stream';

export async function runServe(io: { stdout: Writable; stderr: Writable }, _options: Record<string, unknown>): Promise<number> {
  io.stderr.write('serve: not built yet\n');
  return 1;
}
