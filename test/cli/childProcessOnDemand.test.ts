import { describe, expect, it } from 'vitest';
import { spawn } from '../../src/childProcessOnDemand';

describe('the node:child_process stand-in given to commander', () => {
  it('spawns with the real node:child_process', async () => {
    const child = spawn(process.execPath, ['-e', 'process.exit(7)'], { stdio: 'ignore' });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(7);
  });
});
