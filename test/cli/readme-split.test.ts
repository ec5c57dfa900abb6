import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf } from '../helpers/docsDrift';

/**
 * The README became a front page and the manual moved to docs/ (issue 25). No fact was to be
 * lost: every section of the 2,655-line README (commit 960579d) is listed here with its new place,
 * and the place must exist. A section renamed or moved again updates its row.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

const SECTIONS: ReadonlyArray<[before: string, now: string]> = [
  ['Quick start', 'README.md#quick-start'],
  ['Use it for real', 'docs/getting-started.md#use-it-for-real'],
  ['Install', 'docs/install.md#install'],
  ['From the .deb', 'docs/install.md#from-the-deb'],
  ['From the executable', 'docs/install.md#from-the-executable'],
  ['From the npm package', 'docs/install.md#from-the-npm-package'],
  ['From a clone, for development', 'docs/install.md#from-a-clone-for-development'],
  ['Contents', 'README.md#where-everything-else-is'],
  ['Commands', 'docs/tour.md#commands'],
  ['`health`', 'docs/tour.md#health'],
  ['`accounts create` and `accounts get`', 'docs/tour.md#accounts-create-and-accounts-get'],
  ['`login-link` (one link)', 'docs/tour.md#login-link-one-link'],
  ['`docs upload`, `docs list`, `docs get`', 'docs/tour.md#docs-upload-docs-list-docs-get'],
  ['`projects list` and `projects status`', 'docs/tour.md#projects-list-and-projects-status'],
  ['`deliverables list` and `deliverables get`', 'docs/tour.md#deliverables-list-and-deliverables-get'],
  ['`profiles` and `whoami`', 'docs/tour.md#profiles-and-whoami'],
  ['`doctor`: is this profile ready for the service?', 'docs/tour.md#doctor-is-this-profile-ready-for-the-service'],
  ['`api`: any endpoint, with the stored key', 'docs/tour.md#api-any-endpoint-with-the-stored-key'],
  ['`completion`', 'docs/install.md#shell-completion'],
  ['Output', 'docs/scripting.md#output'],
  ['`--json` in a pipeline', 'docs/scripting.md#--json-in-a-pipeline'],
  ['Choosing fields: `--json FIELDS`', 'docs/scripting.md#choosing-fields---json-fields'],
  ['Filtering: `--jq EXPRESSION`', 'docs/scripting.md#filtering---jq-expression'],
  ['Profiles and settings', 'docs/scripting.md#profiles-and-settings'],
  ['Where settings come from', 'docs/scripting.md#where-settings-come-from'],
  ['Environment variables', 'docs/scripting.md#environment-variables'],
  ['Global flags', 'docs/scripting.md#global-flags'],
  ['Exit codes', 'docs/scripting.md#exit-codes'],
  ['The HTTP layer', 'docs/scripting.md#the-http-layer'],
  ['Scripts and cron', 'docs/cron.md#cron-recipes'],
  ['Following pages: `--all`', 'docs/scripting.md#following-pages---all'],
  ['Many login links', 'docs/season-workflows.md#many-login-links'],
  ['The ledger', 'docs/season-workflows.md#the-ledger'],
  ['Renewal from cron: `login-link renew`', 'docs/cron.md#renewal-from-cron-login-link-renew'],
  ['Following the work: `status` and `watch`', 'docs/following.md#following-the-work-status-and-watch'],
  ['Season workflows', 'docs/season-workflows.md#season-workflows'],
  ['Import a client list: `accounts import`', 'docs/season-workflows.md#import-a-client-list-accounts-import'],
  ['Send their links', 'docs/season-workflows.md#send-their-links'],
  ['Re-run safely', 'docs/season-workflows.md#re-run-safely'],
  ['The results file', 'docs/season-workflows.md#the-results-file'],
  ['Sync a folder of documents: `docs sync`', 'docs/season-workflows.md#sync-a-folder-of-documents-docs-sync'],
  ['Nightly sync of a shared folder from cron', 'docs/cron.md#nightly-sync-of-a-shared-folder-from-cron'],
  ['The mock: `taxprep serve --mock`', 'docs/mock.md#the-mock-taxprep-serve---mock'],
  ['Demo keys and demo data', 'docs/mock.md#demo-keys-and-demo-data'],
  ['Rate limits in the mock', 'docs/mock.md#rate-limits-in-the-mock'],
  ['Your own data: `--seed FILE`', 'docs/mock.md#your-own-data---seed-file'],
  ['Keeping data between runs: `--data-dir DIR`', 'docs/mock.md#keeping-data-between-runs---data-dir-dir'],
  ['Uploads', 'docs/mock.md#uploads'],
  ["The client app's pages (`{app_url}`)", 'docs/mock.md#the-client-apps-pages-app_url'],
  ['The contract as OpenAPI: `{base_url}/openapi.json`', 'docs/mock.md#the-contract-as-openapi-base_urlopenapijson'],
  ['Mock-only controls (`/_mock`)', 'docs/mock.md#mock-only-controls-_mock'],
  ['Simulating the preparer: `--simulate`', 'docs/mock.md#simulating-the-preparer---simulate'],
  ['Fault injection', 'docs/mock.md#fault-injection'],
  ['Reliability', 'docs/mock.md#reliability'],
  ['Contract notes', 'docs/contract-notes.md#contract-notes'],
  ['Ids and success codes', 'docs/contract-notes.md#ids-and-success-codes'],
  ['Errors and codes', 'docs/contract-notes.md#errors-and-codes'],
  ['Filters and pagination', 'docs/contract-notes.md#filters-and-pagination'],
  ['Accounts and login links', 'docs/contract-notes.md#accounts-and-login-links'],
  ['Documents and uploads', 'docs/contract-notes.md#documents-and-uploads'],
  ['Deliverables and view links', 'docs/contract-notes.md#deliverables-and-view-links'],
  ['The OpenAPI document', 'docs/contract-notes.md#the-openapi-document'],
  ['Auth, keys and rate limits', 'docs/contract-notes.md#auth-keys-and-rate-limits'],
  ['What the client tolerates and what it refuses', 'docs/contract-notes.md#what-the-client-tolerates-and-what-it-refuses'],
  ['CLI-side choices', 'docs/contract-notes.md#cli-side-choices'],
  // Added by the merges of 25 November (README edits of the other branches, carried into docs/).
  ['What the client refuses, and why', 'docs/contract-notes.md#what-the-client-refuses-and-why'],
  ['Development', 'docs/development.md#development'],
  ['Tests', 'docs/development.md#tests'],
  ['Benchmarks', 'docs/development.md#benchmarks'],
];

describe('the README split into docs/', () => {
  it.each(SECTIONS)('"%s" is now at %s', (_, place) => {
    const [file, anchor] = place.split('#') as [string, string];
    expect(anchorsOf(readFileSync(join(root, file), 'utf8'))).toContain(anchor);
  });

  it('the README is a front page of at most 250 lines with the two commands a fresh machine needs', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    // .ci/run and the project's rules rely on exactly these: one that installs (building) and shows the tool working, and the tests.
    expect(readme).toContain('```sh\nnpm install && npm run demo   # installs, builds, then runs every command against the built-in mock\nnpm test                      # the whole test suite (unit, mock and end-to-end)\n```');
    for (const guide of ['getting-started', 'scripting', 'season-workflows', 'cron', 'following', 'mock', 'contract-notes', 'install', 'development']) expect(readme).toContain(`](docs/${guide}.md)`);
  });

  it('getting started is a page a newcomer finishes: at most 250 lines, leading to the tour and every guide', () => {
    const page = readFileSync(join(root, 'docs', 'getting-started.md'), 'utf8');
    expect(page.split('\n').length).toBeLessThanOrEqual(250);
    for (const guide of ['tour', 'season-workflows', 'cron', 'following', 'webhooks', 'team', 'secrets', 'tls', 'scripting', 'mock', 'contract-notes']) expect(page).toContain(`](${guide}.md)`);
  });
});
