import type { MigrationArea } from '../schema';
import { CORE } from './core';
import { WATCH_AREA } from './watch';

/**
 * Every area of the shared store, each with its own numbered steps and its own version row in
 * `taxprep_state.schema_versions`: an area (watch, outbox, hooks) adds a file beside core.ts and one
 * entry here, and never touches another area's steps, so branches that add tables do not collide.
 */
export const AREAS: readonly MigrationArea[] = [CORE, WATCH_AREA];
