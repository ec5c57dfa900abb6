import { describe, expect, it } from 'vitest';
import { expiringLinks, sortByPriority } from '../../src/follow/attention';

const item = (priority: string, requested_at: string | null) => ({ priority, requested_at });

describe('sortByPriority', () => {
  it('puts high before medium, other values after them in the order first seen, and the oldest first within each', () => {
    const sorted = sortByPriority([
      item('low', '2026-11-01T00:00:00Z'),
      item('medium', '2026-11-05T00:00:00Z'),
      item('urgent', '2026-11-01T00:00:00Z'),
      item('high', '2026-11-09T00:00:00Z'),
      item('medium', '2026-11-02T00:00:00Z'),
      item('low', '2026-10-01T00:00:00Z'),
      item('high', null),
      item('high', '2026-11-03T00:00:00Z'),
    ]);
    expect(sorted).toEqual([
      item('high', '2026-11-03T00:00:00Z'),
      item('high', '2026-11-09T00:00:00Z'),
      item('high', null),
      item('medium', '2026-11-02T00:00:00Z'),
      item('medium', '2026-11-05T00:00:00Z'),
      item('low', '2026-10-01T00:00:00Z'),
      item('low', '2026-11-01T00:00:00Z'),
      item('urgent', '2026-11-01T00:00:00Z'),
    ]);
  });
});

describe('expiringLinks', () => {
  it('keeps the links expiring within the window, and expired ones, soonest first', () => {
    const now = new Date('2026-11-25T00:00:00Z');
    const links = [{ expires_at: '2026-11-25T20:00:00Z' }, { expires_at: '2026-11-27T00:00:00Z' }, { expires_at: '2026-11-24T00:00:00Z' }, { expires_at: '2026-11-26T00:00:00Z' }];
    expect(expiringLinks(links, now, 24 * 3_600_000)).toEqual([{ expires_at: '2026-11-24T00:00:00Z' }, { expires_at: '2026-11-25T20:00:00Z' }, { expires_at: '2026-11-26T00:00:00Z' }]);
  });
});
