import { stateChecks } from './state';
import { CONFIGURABLE_QUERY_PARAMETERS, ENVIRONMENT_VARIABLES } from '../../config/settings';
import { UsageError } from '../../errors';
import { createOutput } from '../../output';
import { palette } from '../../output/colors';
import { wrapText } from '../../output/wrap';
import { writeText } from '../../output/write';
import type { Context, ResolvedSettings } from '../../types';
import type { RawInvocation } from '../types';
import { countedApi, REQUEST_BUDGET } from './budget';
import { CHECK_GROUPS, exitCodeOf, ok, skip, warn, type Check, type CheckGroup, type CheckStatus } from './checks';
import { hookChecks } from './hooks';
import { baseUrlChecks, codeCacheCheck, keyConfigured, ledgerDirectoryCheck, plainTextKeyChecks, profileFileCheck } from './local';
import { findNames, type NameFinding } from './names';
import { knownRuleChecks, namesInEffect } from './rules';
import { clockCheck, healthChecks, keyChecks, permissionChecks, quotaCheck } from './service';
import { chainChecks, trustStoreChecks } from './tls';

export interface DoctorOptions {
  /** Only the checks that need no request. */
  offline: boolean;
  /** Store the query parameter names found in the profile in use. */
  save: boolean;
}

export function parseOptions(raw: RawInvocation): DoctorOptions {
  const options = { offline: raw.flags.offline === true, save: raw.flags.save === true };
  if (options.offline && options.save) {
    throw new UsageError('--save stores what doctor finds at the service, and --offline asks the service nothing', { details: { '--save': ['cannot be used with --offline'] } });
  }
  return options;
}

/** The flag that names the profile in a command to copy, when one was named. */
function profileFlag(settings: ResolvedSettings): string {
  return settings.profileSource === 'flag' ? ` --profile ${settings.profileName}` : '';
}

function nameCheck(finding: NameFinding, settings: ResolvedSettings, saved: boolean): Check {
  const { setting, configured, found, detail } = finding;
  const setIt = (name: string) => `${ENVIRONMENT_VARIABLES.queryParameters}=${setting}=${name}, or "${setting}" in the profile's query_parameters`;
  switch (finding.outcome) {
    case 'honoured':
      return ok('names', setting, `"${found}" is honoured: ${detail}`);
    case 'other':
      if (saved) return ok('names', setting, `the service honours "${found}", not "${configured}" (${detail}); saved in profile "${settings.profileName}"`);
      return warn(
        'names',
        setting,
        `the service honours "${found}", not "${configured}": ${detail}`,
        settings.profileName === null ? `Set ${setIt(found!)}.` : `Store it in profile "${settings.profileName}": taxprep doctor --save${profileFlag(settings)}`,
      );
    case 'none':
      return warn(
        'names',
        setting,
        detail,
        setting === 'deliverables.offset'
          ? `--all stops at the first repeated page. If you know the service's name for the offset, set ${setIt('<name>')}.`
          : `taxprep drops rows that do not match the filter (with a warning), so lists stay right but pages may be short. If you know the service's name, set ${setIt('<name>')}.`,
      );
    case 'not_checked':
      return skip('names', setting, `not checked: ${detail}`);
    case 'undecided':
      return warn('names', setting, `could not decide: ${detail}`, `Nothing was changed. Run doctor again when there is more data, or ask the service operator for the name and set ${setIt('<name>')}.`);
  }
}

/** The profile's query_parameters with the names found: only those that differ from taxprep's defaults are kept. */
function savedNames(current: Record<string, string> | undefined, findings: readonly NameFinding[]): Record<string, string> {
  const names: Record<string, string> = { ...current };
  for (const finding of findings) {
    if (finding.found === undefined) continue;
    if (finding.found === CONFIGURABLE_QUERY_PARAMETERS[finding.setting]) delete names[finding.setting];
    else names[finding.setting] = finding.found;
  }
  return names;
}

const GROUP_ORDER = Object.keys(CHECK_GROUPS) as CheckGroup[];

export async function run(ctx: Context, options: DoctorOptions): Promise<number> {
  const settings = await ctx.settings();
  if (options.save && settings.profileName === null) {
    throw new UsageError('--save stores the names in a profile, and no profile is in use', { hint: 'Name one with --profile, or add one with `taxprep profiles add <name>`.' });
  }
  const out = createOutput(ctx);
  const store = await ctx.profiles();
  const who = settings.profileName === null ? 'the settings in effect' : `profile "${settings.profileName}"`;
  await out.note(
    options.offline
      ? `Checking ${who} (${settings.baseUrl}) without asking the service (--offline): local checks only.`
      : `Checking ${who} against ${settings.baseUrl}: at most ${REQUEST_BUDGET} requests, reads only (nothing is written).`,
  );

  const learnedStore = await ctx.learned();
  // A shared store that cannot be read is doctor's finding (its store checks say why), not its end.
  const learnedRead = await learnedStore.read().then(
    (rules) => ({ rules, problem: undefined }),
    (error: unknown) => ({ rules: {}, problem: error instanceof Error ? error.message : String(error) }),
  );
  const learned = learnedRead.rules;
  const checks: Check[] = [...baseUrlChecks(settings, ctx.env)];
  const key = keyConfigured(settings);
  checks.push(key);
  const trust = await ctx.trust();
  checks.push(...trustStoreChecks(trust));
  let findings: NameFinding[] = [];
  let used = 0;
  let saved = false;
  if (!options.offline) {
    const api = countedApi(await ctx.api({ requireKey: false, retry: false }));
    const health = await healthChecks(api, settings.baseUrl, ctx.env, ctx.clock);
    checks.push(...health.checks);
    const keyMaySend = key.status === 'ok' && checks.every((check) => !(check.name === 'scheme' && check.status === 'fail'));
    const notAsked = !health.isApi ? "not checked: the base URL does not answer as the service's API" : !keyMaySend ? 'not checked: no key that may be sent' : undefined;
    if (notAsked !== undefined) {
      checks.push(skip('key', 'accepted', notAsked));
    } else {
      const keyResult = await keyChecks(api);
      checks.push(...keyResult.checks);
      if (keyResult.outcome.check.result === 'accepted') {
        const permissions = await permissionChecks(api, keyResult.outcome);
        checks.push(...permissions.checks);
        findings = await findNames(api, namesInEffect(settings, learned), {
          ...(keyResult.outcome.page === undefined ? {} : { deliverables: keyResult.outcome.page.data.deliverables as Array<Record<string, unknown>> }),
          ...(permissions.projects === undefined ? {} : { projects: permissions.projects }),
        });
      }
    }
    checks.push(...(await chainChecks(trust, settings.baseUrl, ctx.env)));
    if (health.checks.some((check) => check.name === 'reachable' && check.status === 'ok')) checks.push(clockCheck(health.date));
    checks.push(quotaCheck(api.latestHeaders(), health.date, ctx.clock.now().getTime(), api.used()));
    used = api.used();
    if (options.save && findings.some((finding) => finding.found !== undefined)) {
      const profile = store.get(settings.profileName!)!;
      await store.save({ ...profile, queryParameters: savedNames(profile.queryParameters, findings) });
      saved = true;
    }
    checks.push(...findings.map((finding) => nameCheck(finding, settings, saved)));
    if (saved && ctx.env[ENVIRONMENT_VARIABLES.queryParameters]) {
      checks.push(warn('names', 'saved', `${ENVIRONMENT_VARIABLES.queryParameters} is set and wins over the names saved in the profile`, `Unset ${ENVIRONMENT_VARIABLES.queryParameters} to use them.`));
    }
  }
  checks.push(...knownRuleChecks(settings, learned, learnedStore));
  if (learnedRead.problem !== undefined) checks.push(warn('rules', 'learned', `could not be read: ${learnedRead.problem}`, 'The store checks below say what to do; until then the rules learned on other machines are not used here.'));
  checks.push(profileFileCheck(store.path, settings), ...plainTextKeyChecks(store.list(), store.path), ledgerDirectoryCheck(ctx.env), codeCacheCheck(ctx.env));
  const state = await stateChecks(ctx);
  checks.push(...state);
  // A shared store's hooks are read only from a schema this taxprep knows: reading would migrate it (doctor changes nothing).
  const schema = state.find((check) => check.name === 'schema');
  if (state.length === 0 || schema?.status === 'ok') checks.push(...(await hookChecks(ctx)));
  checks.sort((a, b) => GROUP_ORDER.indexOf(a.group) - GROUP_ORDER.indexOf(b.group));

  const exitCode = exitCodeOf(checks);
  if (ctx.globals.json) {
    await out.json({
      profile: settings.profileName,
      base_url: settings.baseUrl,
      offline: options.offline,
      request_budget: REQUEST_BUDGET,
      requests_used: used,
      passed: exitCode === 0,
      exit_code: exitCode,
      checks: checks.map((check) => ({ group: check.group, name: check.name, status: check.status, detail: check.detail, fix: check.fix ?? null })),
      query_parameters: Object.fromEntries(findings.map((finding) => [finding.setting, { configured: finding.configured, found: finding.found ?? null, outcome: finding.outcome }])),
      saved,
    });
  } else {
    const columns = ctx.io.stdoutIsTTY ? ctx.io.columns : undefined;
    await writeText(ctx.io.stdout, renderChecklist(checks, ctx.io.stdoutColor, `${used} of ${REQUEST_BUDGET} requests`, columns));
  }
  return exitCode;
}

const STATUS_WORD: Record<CheckStatus, string> = { ok: 'ok', warn: 'warn', fail: 'FAIL', skip: 'skip' };

/** The checklist by group: status, name, what was found, and on the next line what to do. */
export function renderChecklist(checks: readonly Check[], color: boolean, requests: string, columns?: number): string {
  const colors = palette(color);
  const paint: Record<CheckStatus, (text: string) => string> = { ok: colors.green, warn: colors.yellow, fail: colors.red, skip: colors.dim };
  const width = Math.max(...checks.map((check) => check.name.length));
  // On a terminal a detail wraps at word boundaries and continues under itself, not under the status.
  const detailIndent = ' '.repeat(2 + 5 + 1 + width + 2);
  const fitted = (text: string) =>
    columns === undefined ? text : wrapText(text, Math.max(20, columns - detailIndent.length)).split('\n').join(`\n${detailIndent}`);
  const lines: string[] = [];
  for (const group of GROUP_ORDER) {
    const inGroup = checks.filter((check) => check.group === group);
    if (inGroup.length === 0) continue;
    if (lines.length > 0) lines.push('');
    lines.push(colors.bold(CHECK_GROUPS[group]));
    for (const check of inGroup) {
      lines.push(`  ${paint[check.status](STATUS_WORD[check.status].padEnd(5))} ${check.name.padEnd(width)}  ${fitted(check.detail)}`);
      if (check.fix !== undefined) lines.push(`${detailIndent}${fitted(`${colors.dim('fix:')} ${check.fix}`)}`);
    }
  }
  const count = (status: CheckStatus) => checks.filter((check) => check.status === status).length;
  const failed = count('fail');
  const summary = `${failed === 0 ? 'All checks passed' : `${failed} failed`}: ${count('ok')} ok, ${count('warn')} warning${count('warn') === 1 ? '' : 's'}, ${count('skip')} skipped; ${requests}.`;
  lines.push('', columns === undefined ? summary : wrapText(summary, columns));
  return `${lines.join('\n')}\n`;
}
