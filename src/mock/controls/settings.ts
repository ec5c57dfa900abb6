import * as z from 'zod';
import { integer } from '../../contract';
import { durationRule, parseDuration } from '../../lib/duration';
import type { MockDeps } from '../deps';
import { control } from './control';
import { faultSettings, MAX_ADVANCE_SECONDS, rateLimitWindows } from './settingsRules';

/** Controls of the mock itself: reset, the virtual clock, fault injection and rate limits. */

const reset = control({
  method: 'POST',
  path: '/reset',
  summary: 'Back to the seed: every record, uploaded file, email and the clock; the request log is emptied too.',
  async handle(_input, deps) {
    await deps.store.reset();
    deps.requestLog.clear();
    return { reset: true, now: deps.clock.nowIso() };
  },
});

const clockOf = (deps: MockDeps) => ({
  now: deps.clock.nowIso(),
  offset_ms: deps.store.state.clockOffsetMs,
});

const readClock = control({
  method: 'GET',
  path: '/clock',
  summary: 'The virtual clock: now, and offset_ms from the real clock.',
  handle: (_input, deps) => clockOf(deps),
});

const advanceClock = control({
  method: 'POST',
  path: '/clock',
  summary: 'Move the virtual clock forward: {"advance_seconds": 90000} or {"advance": "1d1h"} (units d, h, m, s, ms).',
  body: z
    .strictObject({
      advance_seconds: integer(1, MAX_ADVANCE_SECONDS, `an integer from 1 to ${MAX_ADVANCE_SECONDS} (ten years)`).optional(),
      advance: z
        .string({ error: 'must be a string' })
        .transform((value, ctx) => {
          const ms = parseDuration(value);
          if (ms === undefined || ms < 1 || ms > MAX_ADVANCE_SECONDS * 1000) {
            ctx.addIssue({ code: 'custom', message: `must be ${durationRule()}, more than 0 and at most ten years` });
            return z.NEVER;
          }
          return ms;
        })
        .optional(),
    })
    .refine((body) => (body.advance_seconds === undefined) !== (body.advance === undefined), {
      error: 'must give exactly one of advance_seconds and advance',
    })
    // The refinement above guarantees that exactly one of the two is there.
    .transform((body) => (body.advance_seconds === undefined ? body.advance : body.advance_seconds * 1000) as number),
  async handle({ body: ms }, deps) {
    await deps.clock.advance(ms);
    return clockOf(deps);
  },
});

const faultsOf = (deps: MockDeps) => ({
  latency_ms: deps.settings.faults.latencyMs,
  error_rate: deps.settings.faults.errorRate,
  drop_rate: deps.settings.faults.dropRate,
});

const readFaults = control({
  method: 'GET',
  path: '/faults',
  summary: 'Fault injection on contract requests: latency_ms, error_rate (503s), drop_rate (closed connections).',
  handle: (_input, deps) => faultsOf(deps),
});

const setFaults = control({
  method: 'PUT',
  path: '/faults',
  summary: 'Change fault injection; fields left out keep their value. {"latency_ms":0,"error_rate":0,"drop_rate":0} turns it off.',
  body: faultSettings,
  handle({ body }, deps) {
    const { faults } = deps.settings;
    if (body.latency_ms !== undefined) faults.latencyMs = body.latency_ms;
    if (body.error_rate !== undefined) faults.errorRate = body.error_rate;
    if (body.drop_rate !== undefined) faults.dropRate = body.drop_rate;
    return faultsOf(deps);
  },
});

const rateLimitsOf = (deps: MockDeps) => ({
  windows: deps.settings.rateLimits.map((window) => ({ limit: window.limit, window_seconds: window.windowSeconds })),
});

const readRateLimits = control({
  method: 'GET',
  path: '/rate-limits',
  summary: 'Rate-limit windows per API key; an empty list means rate limiting is off.',
  handle: (_input, deps) => rateLimitsOf(deps),
});

const setRateLimits = control({
  method: 'PUT',
  path: '/rate-limits',
  summary: 'Replace the windows: {"windows":[{"limit":100,"window_seconds":60}]}; [] turns limiting off. Counts start afresh when the windows change.',
  body: z.strictObject({ windows: rateLimitWindows }),
  handle({ body }, deps) {
    deps.settings.rateLimits = body.windows.map((window) => ({ limit: window.limit, windowSeconds: window.window_seconds }));
    return rateLimitsOf(deps);
  },
});

export const settingsControls = [reset, readClock, advanceClock, readFaults, setFaults, readRateLimits, setRateLimits];

