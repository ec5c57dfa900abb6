/**
 * Loads a package that is only an ES module and stays out of the bundle (conf). The bundle runs
 * as a script compiled with a code cache (src/launch.ts), where Node 20 offers no `import()`:
 * there bin/build.js puts the launcher's own `import` in place of this module (in the single
 * executable, the loader of its assets: src/sea/main.ts).
 */
export function importPackage<T>(name: string): Promise<T> {
  return import(name) as Promise<T>;
}
