declare const TAXPREP_VERSION: string | undefined;

/** Set by the build (esbuild `--define`); source runs (tests) report a development version. */
export const VERSION = typeof TAXPREP_VERSION === 'string' ? TAXPREP_VERSION : '0.0.0-dev';
