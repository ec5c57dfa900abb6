// Types of bin/build.js for the test that builds with the same options (test/cli/startup.test.ts).
import type { BuildOptions } from 'esbuild';

export const buildOptions: BuildOptions;
export const mockBuildOptions: BuildOptions;
/** Throws, naming the offset, when `text` holds a character that is not ASCII. */
export function checkAscii(text: string): void;
/** The commit (`unknown` outside git) and build time `taxprep version` reports. */
export function buildStamp(directory?: string, env?: Record<string, string | undefined>): { commit: string; date: string };
/** The esbuild `define`s src/api/version.ts reads; `release` marks the build `npm run release` ships. */
export function stampDefines(version: string, stamp: { commit: string; date: string }, release?: boolean): Record<string, string>;
