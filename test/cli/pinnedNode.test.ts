import { describe, expect, it } from 'vitest';
import { assertSupported, PINNED_NODE } from '../../bin/pinnedNode.js';

describe('the Node inside the single executable (bin/pinnedNode.js)', () => {
  it('is one exact release of the line whose end of life is written beside it', () => {
    expect(PINNED_NODE.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(`v${PINNED_NODE.version.split('.')[0]}`).toBe(PINNED_NODE.line);
    // Even-numbered lines are the ones that become LTS; odd ones end after about eight months.
    expect(Number(PINNED_NODE.line.slice(1)) % 2).toBe(0);
    expect(PINNED_NODE.endOfLife).toMatch(/^\d{4}-\d\d-\d\d$/);
  });

  // Fails from the pinned line's end of life on: a release must not be built on a Node without security fixes.
  it('comes from a line still supported today', () => {
    expect(() => assertSupported(PINNED_NODE)).not.toThrow();
  });

  it('is refused from the day its line reaches end of life', () => {
    const endOfLife = new Date(`${PINNED_NODE.endOfLife}T00:00:00Z`);
    expect(() => assertSupported(PINNED_NODE, new Date(endOfLife.getTime() - 1))).not.toThrow();
    expect(() => assertSupported(PINNED_NODE, endOfLife)).toThrow(`reached end of life on ${PINNED_NODE.endOfLife}: pin a release of a supported LTS line in bin/pinnedNode.js`);
    // Node 20, as the executable carried it before: out of support since 2026-04-30.
    expect(() => assertSupported({ version: '20.20.2', endOfLife: '2026-04-30' }, new Date('2026-11-25T00:00:00Z'))).toThrow('Node 20.20.2');
  });
});
