import { describeLearned, type LearnedService, type LearnedStore } from '../../config/learned';
import { CONFIGURABLE_QUERY_PARAMETERS } from '../../config/settings';
import { uploadRulesOf } from '../../api/uploadRules';
import { formatBytes } from '../../output/progress';
import type { ResolvedSettings } from '../../types';
import { ok, type Check } from './checks';

/**
 * The rules the contract leaves "not shown" that taxprep knows for this profile and base URL: set
 * by hand in the profile, or learned from the service (src/config/learned.ts). Asked of no one:
 * what the service said before, and where it is kept.
 */
export function knownRuleChecks(settings: ResolvedSettings, learned: LearnedService, store: Pick<LearnedStore, 'where' | 'forget'>): Check[] {
  const rules = uploadRulesOf(settings, learned);
  const unknown = (what: string) => `not known (the contract does not show it): files are sent and the service decides; a refusal that names ${what} is remembered`;
  const checks: Check[] = [
    ok('rules', 'upload size', rules.maxBytes === undefined ? unknown('its limit') : `at most ${formatBytes(rules.maxBytes.value)} (${rules.maxBytes.source})`),
    ok('rules', 'upload types', rules.types === undefined ? unknown('the types it takes') : `${rules.types.value.join(', ')} (${rules.types.source})`),
  ];
  for (const [setting, rule] of Object.entries(learned.query_parameters ?? {})) {
    const byHand = settings.queryParameters[setting] !== CONFIGURABLE_QUERY_PARAMETERS[setting as keyof typeof CONFIGURABLE_QUERY_PARAMETERS];
    checks.push(ok('rules', setting, `"${rule.value}" (${describeLearned(rule)})${byHand ? `; the name set by hand, "${settings.queryParameters[setting]}", wins` : ''}`));
  }
  if (Object.keys(learned).length > 0) checks.push(ok('rules', 'kept in', `${store.where} (${store.forget})`));
  return checks;
}

/** The query parameter names as sent: those set by hand, else those learned, else taxprep's defaults. */
export function namesInEffect(settings: ResolvedSettings, learned: LearnedService): Record<string, string> {
  const names = { ...settings.queryParameters };
  for (const [setting, rule] of Object.entries(learned.query_parameters ?? {})) {
    if (names[setting] === CONFIGURABLE_QUERY_PARAMETERS[setting as keyof typeof CONFIGURABLE_QUERY_PARAMETERS]) names[setting] = rule.value;
  }
  return names;
}
