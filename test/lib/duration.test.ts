import { describe, expect, it } from 'vitest';
import { bareNumberNote, formatDuration, parseDuration } from '../../src/lib/duration';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['1.5s', 1500],
    ['90m', 5_400_000],
    ['24h', 86_400_000],
    ['1d', 86_400_000],
    ['7d', 604_800_000],
    ['1h30m', 5_400_000],
    ['1d1h', 90_000_000],
    ['2m 5s', 125_000],
    [' 10S ', 10_000],
    ['0s', 0],
    ['0.4ms', 0],
  ])('%j -> %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([['30'], ['1.5'], [''], ['s'], ['-5s'], ['5 s'], ['5sec'], ['1w'], ['1h-30m'], ['1e3s'], ['.5s'], ['5s,'], [`${'9'.repeat(400)}d`]])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('names the units a bare number may have meant, and nothing for anything else', () => {
    expect(bareNumberNote(' 24 ')).toBe('; 24 has no unit: 24s, 24m, 24h or 24d?');
    expect(bareNumberNote('24x')).toBe('');
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [1, '1ms'],
    [250, '250ms'],
    [999, '999ms'],
    [999.6, '1s'],
    [1000, '1s'],
    [1500, '1.5s'],
    [9_940, '9.9s'],
    [9_960, '10s'],
    [12_000, '12s'],
    [59_400, '59s'],
    [59_600, '1m'],
    [125_000, '2m 5s'],
    [3_599_600, '1h'],
    [5_400_000, '1h 30m'],
    [86_400_000, '1d'],
    [183_600_000, '2d 3h'],
  ])('%d ms -> %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('writes what the grammar reads back', () => {
    for (const ms of [250, 1500, 12_000, 125_000, 5_400_000, 183_600_000]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
