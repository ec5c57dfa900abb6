import { documentMediaTypeOf, normalType } from '../contract/uploads';
import { describeLearned, type LearnedService } from '../config/learned';
import type { ResolvedSettings } from '../types';

/**
 * Upload size and type rules: the contract leaves both "not shown", so taxprep refuses a file
 * before sending only by a rule known for this profile and base URL: set by hand in the profile
 * (`upload_max_size`, `upload_types`), or learned from the service's own refusal naming it (a
 * 413, 415, or 400 whose details give the limit or the list). Without one, the file is sent and
 * the service decides.
 */

/** A rule in force, and where it came from in words for messages. */
export interface KnownRule<T> {
  value: T;
  source: string;
}

export interface UploadRules {
  maxBytes?: KnownRule<number>;
  /** Media types and `.extensions`, lower case. */
  types?: KnownRule<string[]>;
}

/** The rules in force: the profile's hand settings over what was learned. */
export function uploadRulesOf(settings: Pick<ResolvedSettings, 'profileName' | 'uploadMaxBytes' | 'uploadTypes'>, learned: LearnedService): UploadRules {
  const rules: UploadRules = {};
  const profile = `set in profile "${settings.profileName}"`;
  if (settings.uploadMaxBytes !== undefined) rules.maxBytes = { value: settings.uploadMaxBytes, source: `${profile} (upload_max_size)` };
  else if (learned.upload_max_bytes !== undefined) rules.maxBytes = { value: learned.upload_max_bytes.value, source: describeLearned(learned.upload_max_bytes) };
  if (settings.uploadTypes !== undefined) rules.types = { value: settings.uploadTypes, source: `${profile} (upload_types)` };
  else if (learned.upload_types !== undefined) rules.types = { value: learned.upload_types.value, source: describeLearned(learned.upload_types) };
  return rules;
}

function extensionOf(filename: string): string | undefined {
  return /\.[^./\\]*$/.exec(filename)?.[0]?.toLowerCase();
}

/** The media type a file is sent as: from taxprep's table of extensions, `application/octet-stream` for any other. */
export function sentMediaType(filename: string): string {
  return documentMediaTypeOf(filename) ?? 'application/octet-stream';
}

/** Why a known rule refuses this file (with the rule's source), or undefined when none does. */
export function ruleProblem(rules: UploadRules, filename: string, size: number, formatBytes: (bytes: number) => string): string | undefined {
  if (rules.types !== undefined) {
    const extension = extensionOf(filename);
    const listed = rules.types.value;
    if (!listed.includes(sentMediaType(filename)) && (extension === undefined || !listed.includes(extension))) {
      const what = extension === undefined ? 'has no file extension' : `is of a type (${extension}, sent as ${sentMediaType(filename)})`;
      return `${what} the service does not take: it takes ${listed.join(', ')} (${rules.types.source})`;
    }
  }
  if (rules.maxBytes !== undefined && size > rules.maxBytes.value) {
    return `is ${formatBytes(size)}, over the service's upload limit of ${formatBytes(rules.maxBytes.value)} (${rules.maxBytes.source})`;
  }
  return undefined;
}

/** Keys under which services commonly name an upload's largest size and its accepted types. */
const SIZE_KEY = /^(max|maximum|limit|size_?limit|max_?(upload|file|body|request|content)?_?(size|bytes|length)(_?bytes)?|max_?bytes|(upload|file)_?(size_?)?limit(_?bytes)?)$/i;
const TYPES_KEY = /^(expected|allowed|accepted|supported|permitted)(_?(types|media_?types|mime_?types|extensions|file_?types|formats))?$|^(types|media_?types|mime_?types|extensions|file_?types|formats)(_?(allowed|accepted|supported))?$/i;
const SAYS_SIZE = /size|large|big|bytes|limit/i;
const SAYS_TYPE = /type|media|mime|extension|format/i;

/** The error body's details and one level of nested objects, as [key, value] pairs. */
function detailEntries(details: unknown): Array<[string, unknown]> {
  if (typeof details !== 'object' || details === null || Array.isArray(details)) return [];
  const entries: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(details)) {
    entries.push([key, value]);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) entries.push(...Object.entries(value));
  }
  return entries;
}

/** A size in bytes from a number, or from text such as `10MB` / `10485760`. */
function bytesOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/i.exec(value.trim());
  if (match === null) return undefined;
  const unit = { b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  const bytes = Math.round(Number(match[1]) * unit);
  return bytes > 0 ? bytes : undefined;
}

/**
 * The rule an upload refusal names, if it names one: a 413 (or a 400 that speaks of size) with a
 * byte count in its details; a 415 (or a 400 that speaks of type) with a list of types. A refusal
 * without such details teaches nothing: the file was refused, but the rule stays unknown.
 */
export function ruleFromRefusal(status: number, body: unknown): { maxBytes?: number; types?: string[] } {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  if (error === undefined || error === null || typeof error !== 'object') return {};
  const words = `${typeof error.code === 'string' ? error.code : ''} ${typeof error.message === 'string' ? error.message : ''}`;
  const entries = detailEntries(error.details);
  const rule: { maxBytes?: number; types?: string[] } = {};
  if (status === 413 || (status === 400 && SAYS_SIZE.test(words))) {
    for (const [key, value] of entries) {
      const bytes = SIZE_KEY.test(key) ? bytesOf(value) : undefined;
      if (bytes !== undefined) {
        rule.maxBytes = bytes;
        break;
      }
    }
  }
  if (status === 415 || (status === 400 && SAYS_TYPE.test(words))) {
    for (const [key, value] of entries) {
      if (!TYPES_KEY.test(key) || !Array.isArray(value)) continue;
      const types = value.filter((entry): entry is string => typeof entry === 'string').map(normalType).filter((entry): entry is string => entry !== undefined);
      // A list of body types (`multipart/form-data`) is about the request, not about the file.
      if (types.length > 0 && !types.some((type) => type.startsWith('multipart/'))) {
        rule.types = [...new Set(types)];
        break;
      }
    }
  }
  return rule;
}
