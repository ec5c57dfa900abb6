declare const TAXPREP_VERSION: string | undefined;
declare const TAXPREP_COMMIT: string | undefined;
declare const TAXPREP_BUILD_DATE: string | undefined;
declare const TAXPREP_RELEASE: boolean | undefined;

/** Set by the build (esbuild `--define`, bin/build.js); source runs (tests) report a development version. */
export const VERSION = typeof TAXPREP_VERSION === 'string' ? TAXPREP_VERSION : '0.0.0-dev';
/** The commit built, `unknown` when built outside git or run from the sources. */
export const COMMIT = typeof TAXPREP_COMMIT === 'string' ? TAXPREP_COMMIT : 'unknown';
/** When it was built (ISO 8601, UTC), `unknown` when run from the sources. */
export const BUILD_DATE = typeof TAXPREP_BUILD_DATE === 'string' ? TAXPREP_BUILD_DATE : 'unknown';
/** Whether this is a release build (`npm run release`: bin/build.js --release), which refuses test-only switches. */
export const RELEASE_BUILD = typeof TAXPREP_RELEASE === 'boolean' && TAXPREP_RELEASE;
