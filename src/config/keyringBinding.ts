import type { KeyringBinding } from './credentialStore';

/**
 * The binding of the npm package (`@napi-rs/keyring` picks its prebuilt addon for the platform),
 * in a module of its own that only `import()` reaches, so that start-up never reaches it. Inside
 * the single executable, whose `require` reaches only its assets, the addon shipped beside it is
 * opened by path (src/sea/main.ts).
 */
export function loadKeyringBinding(): KeyringBinding {
  return require('@napi-rs/keyring') as KeyringBinding;
}
