import type { FastifyInstance } from 'fastify';
import type { MockDeps } from '../deps';
import { CONTROL_PREFIX, control, registerControl, type AnyControl } from './control';
import { observeControls } from './observe';
import { recordControls } from './records';
import { settingsControls } from './settings';

/**
 * The mock-only controls under `/_mock`: JSON in and out, no API key, and (kept off `/v1beta` by
 * the server) never rate limited nor logged. `GET /_mock` lists them all, itself included.
 */
export function registerControls(app: FastifyInstance, deps: MockDeps): void {
  const controls: AnyControl[] = [];
  const listing = control({
    method: 'GET',
    path: '',
    summary: 'This list of controls.',
    handle: () => ({
      controls: controls.map((each) => ({ method: each.method, path: CONTROL_PREFIX + each.path, summary: each.summary })),
    }),
  });
  controls.push(listing, ...settingsControls, ...recordControls, ...observeControls);
  for (const each of controls) registerControl(app, deps, each);
}
