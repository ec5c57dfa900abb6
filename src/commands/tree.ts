import { help } from '../help/register';
import { hooks } from './hooks/register';
import { accounts } from './accounts/register';
import { api } from './api/register';
import { complete, completion } from './completion/register';
import { deliverables } from './deliverables/register';
import { docs } from './docs/register';
import { doctor } from './doctor/register';
import { health } from './health/register';
import { loginLink } from './login-link/register';
import { profiles } from './profiles/register';
import { projects } from './projects/register';
import { serve } from './serve/register';
import type { CommandSpec } from './spec';
import { version } from './version/register';
import { status } from './status/register';
import { state } from './state/register';
import { watch } from './watch/register';
import { whoami } from './whoami/register';

export const MAX_RETRIES_LIMIT = 20;

/** The program's own flags: accepted before or after any command. */
export const program: CommandSpec = {
  name: 'taxprep',
  description: 'Work with the partner tax-preparation service from a terminal, a script or cron.',
  flags: [
    { flag: '--json [fields]', help: "print the service's JSON document on stdout (only FIELDS, comma-separated, when given); errors as JSON on stderr" },
    { flag: '--jq <expression>', help: 'filter the JSON output with a jq expression (jq 1.8, built in; implies --json); strings print as text' },
    { flag: '--profile <name>', help: 'use this stored profile (see `taxprep profiles list`)', complete: 'profiles' },
    { flag: '--base-url <url>', help: 'service address including /v1beta (overrides the profile)' },
    { flag: '--timeout <duration>', help: 'time allowed for one request, e.g. 30s, 2m, 500ms', default: '30s', setting: true },
    { flag: '--max-retries <n>', help: 'retries of a failed request', range: { min: 0, max: MAX_RETRIES_LIMIT }, default: '3', setting: true },
    { flag: '--no-retry', help: 'never retry a request (same as --max-retries 0)', setting: true },
    { flag: '--max-response-size <size>', help: 'largest answer taxprep reads, e.g. 8MB, 512KB (also TAXPREP_MAX_RESPONSE_SIZE)', default: '8MB', setting: true },
    { flag: '--ca-file <path>', help: 'also trust the certificate authorities of this PEM file (also TAXPREP_CA_FILE)', complete: 'files', setting: true },
    { flag: '--state-url <url>', help: 'share taxprep\'s state in PostgreSQL (also TAXPREP_STATE_URL; docs/team.md)', setting: true },
    { flag: '--verbose', help: 'trace each request and response on stderr (the key redacted)' },
    { flag: '--no-color', help: 'no colour (also NO_COLOR=1 or TERM=dumb)' },
  ],
  // The top-level help fits a 24-row screen: two examples (a third went when `state` made the
  // additional commands two lines), the last leading to the rest.
  examples: [
    'taxprep accounts get 1001',
    'taxprep help formatting   # or: flags, environment, exit-codes, a command',
  ],
  subcommands: [health, accounts, loginLink, docs, projects, deliverables, status, watch, hooks, profiles, state, whoami, doctor, api, serve, completion, complete, help, version],
};
