// dist/cli.cjs as a function of what the launcher hands it (src/launch.ts, runCommonJs), inlined
// into the single executable's main script by bin/release.js.
declare module 'taxprep:cli.cjs' {
  const load: (exports: object, require: (id: string) => unknown, module: { exports: unknown }, filename: string, dirname: string, importPackage: (name: string) => Promise<unknown>) => void;
  export default load;
}
