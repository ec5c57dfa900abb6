import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClock } from '../../src/mock/clock';
import type { MockStore } from '../../src/mock/deps';
import { parseFixture } from '../../src/mock/fixture';
import { openStore } from '../../src/mock/store';

const FIXTURE = parseFixture({ partners: [{ id: 1, name: 'Solo', api_keys: [{ key: 'tpk_testKeySolo00000000000001', label: 'main' }] }] });
const REAL = Date.parse('2026-03-01T12:00:00.000Z');
const HOUR = 3_600_000;

const stores: MockStore[] = [];
const directories: string[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

async function store(dataDir?: string): Promise<MockStore> {
  const opened = await openStore({ fixture: FIXTURE, ...(dataDir === undefined ? {} : { dataDir }) });
  stores.push(opened);
  return opened;
}

describe('virtual clock', () => {
  it('is real time until advanced, then real time plus the offset', async () => {
    let real = REAL;
    const clock = createClock(await store(), () => real);
    expect(clock.nowIso()).toBe('2026-03-01T12:00:00.000Z');
    await clock.advance(25 * HOUR);
    expect(clock.nowIso()).toBe('2026-03-02T13:00:00.000Z');
    real += 1000;
    expect(clock.now().getTime()).toBe(REAL + 25 * HOUR + 1000);
  });

  it('refuses to move backward, and stays where it was', async () => {
    const opened = await store();
    const clock = createClock(opened, () => REAL);
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
    await expect(clock.advance(Number.NaN)).rejects.toThrow(RangeError);
    expect(opened.state.clockOffsetMs).toBe(0);
    expect(clock.now().getTime()).toBe(REAL);
  });

  it('never goes backward when the machine clock is set back', async () => {
    let real = REAL;
    const clock = createClock(await store(), () => real);
    expect(clock.now().getTime()).toBe(REAL);
    real -= 5000;
    expect(clock.now().getTime()).toBe(REAL);
    real += 10_000;
    expect(clock.now().getTime()).toBe(REAL + 5000);
  });

  it('goes back to real time on a reset', async () => {
    const opened = await store();
    const clock = createClock(opened, () => REAL);
    await clock.advance(HOUR);
    await opened.reset();
    expect(clock.now().getTime()).toBe(REAL);
  });

  it('keeps an advanced clock across a restart with a data directory', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'taxprep-clock-test-'));
    directories.push(dataDir);
    const first = await openStore({ fixture: FIXTURE, dataDir });
    await createClock(first, () => REAL).advance(48 * HOUR);
    await first.close();
    const clock = createClock(await store(dataDir), () => REAL);
    expect(clock.nowIso()).toBe('2026-03-03T12:00:00.000Z');
  });
});
