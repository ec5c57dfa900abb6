import type { Context } from '../../types';
import { createOutput } from '../../output';
import { sharedStoreOf } from '../../state/backend';
import type { RawInvocation } from '../types';

export type MigrateOptions = Record<string, never>;

export function parseOptions(_raw: RawInvocation): MigrateOptions {
  return {};
}

/** `taxprep state migrate`: each area of the schema at the version this taxprep knows. */
export async function run(ctx: Context, _options: MigrateOptions): Promise<void> {
  const store = await sharedStoreOf(ctx, 'state migrate');
  const { migrate, schemaVersions } = await import('../../state/schema');
  const client = await store.connectUnchecked();
  let steps;
  let versions;
  try {
    steps = await migrate(client, store.url);
    versions = await schemaVersions(client);
  } catch (error) {
    throw store.failure(error);
  } finally {
    client.release();
  }
  const out = createOutput(ctx);
  if (ctx.globals.json) return out.json({ store: store.url, migrated: steps, versions: versions.map(({ area, found }) => ({ area, version: found })) });
  await out.note(
    steps.length === 0
      ? `The schema of ${store.url} is up to date (${versions.map((version) => `${version.area} ${version.found}`).join(', ')}).`
      : `Migrated ${store.url}: ${steps.map((step) => `${step.area} ${step.from} -> ${step.to}`).join(', ')}.`,
  );
}
