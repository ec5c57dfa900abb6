import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import {
  ACCOUNT_STATUSES,
  API_KEY_PATTERN,
  DELIVERABLE_STATUSES,
  DESCRIPTION_MAX_CHARACTERS,
  DOCUMENT_MEDIA_TYPES,
  FILENAME_MAX_CHARACTERS,
  OUTSTANDING_ITEM_PRIORITIES,
  OUTSTANDING_ITEM_TYPES,
  PERMISSIONS,
  PROJECT_STATUSES,
  PROJECT_TYPES,
  SPOUSE_STATUSES,
  TAX_YEAR,
  email,
  oneOf,
  personName,
  redactApiKey,
  multilineText,
  text,
} from '../contract';
import { sha256Hex } from './crypto';
import {
  DEFAULT_FILE_TYPE,
  ITEM_DESCRIPTION_MAX_CHARACTERS,
  SUMMARY_MAX_CHARACTERS,
  TITLE_MAX_CHARACTERS,
  VIEW_LINK_HOURS,
  VIEW_LINK_HOURS_RULE,
  nonBlank,
} from './recordRules';
import type { DeliverableRecord, IdKind, MockState, OutstandingItemRecord, UserRecord } from './state';

/**
 * The seed format of the mock (`serve --mock --seed FILE`): partners with their keys, and the
 * accounts, documents, projects and deliverables the service starts with. Every record carries
 * its id because records refer to each other; users and outstanding items get theirs assigned.
 * Timestamps are ISO 8601, or relative to the moment the fixture is loaded (`now`, `-30d`,
 * `+14d`, `-6h`), so a demo data set never goes stale.
 */

const LABEL_MAX_CHARACTERS = 100;

const RELATIVE_TIME = /^(?:now|([+-])(\d{1,6})([smhd]))$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const TIMESTAMP_RULE = 'must be an ISO 8601 timestamp (2026-04-15T09:30:00Z) or a time relative to loading (now, -30d, +14d, -6h, -90m)';

const timestamp = z.string({ error: TIMESTAMP_RULE }).refine((value) => resolveTimestamp(value, new Date(0)) !== undefined, TIMESTAMP_RULE);

function required(rule: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${rule}`);
}

/** A JSON number (not a string: a seed file is written by hand, not sent as a form) in a range. */
const wholeNumber = (min: number, max: number, rule: string) =>
  z.number({ error: required(rule) }).int(`must be ${rule}`).min(min, `must be ${rule}`).max(max, `must be ${rule}`);
const recordId = wholeNumber(1, Number.MAX_SAFE_INTEGER, 'a positive integer');
const list = <T extends z.ZodType>(item: T) => z.array(item, { error: required('an array') });
const object = <T extends z.core.$ZodLooseShape>(shape: T) => z.strictObject(shape, { error: required('an object') });

// A host name as a redirect URL's WHATWG parser would give it: lower case letters, digits, hyphens, dots.
const DOMAIN_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const domain = z.string({ error: required('a domain name') }).regex(DOMAIN_PATTERN, 'must be a lower-case domain name such as example.com');

const ApiKeySchema = object({
  key: z
    .string({ error: required('a string') })
    .regex(API_KEY_PATTERN, 'must be a well-formed API key: "tpk_" followed by 20 to 128 letters and digits'),
  label: nonBlank(LABEL_MAX_CHARACTERS),
  permissions: list(oneOf(PERMISSIONS)).default([...PERMISSIONS]),
  expires_at: timestamp.nullable().default(null),
});

const PartnerSchema = object({
  id: recordId,
  name: nonBlank(LABEL_MAX_CHARACTERS),
  permitted_redirect_domains: list(domain).default([]),
  api_keys: list(ApiKeySchema).default([]),
});

const SpouseSchema = z.strictObject(
  {
    email,
    first_name: personName,
    last_name: personName,
    status: oneOf(SPOUSE_STATUSES).default('invited'),
  },
  {
    error: (issue) =>
      Array.isArray(issue.input) ? 'must be one object: an account has at most one spouse' : 'must be an object',
  },
);

const AccountSchema = object({
  id: recordId,
  partner_id: recordId,
  email,
  first_name: personName,
  last_name: personName,
  status: oneOf(ACCOUNT_STATUSES).default('active'),
  created_at: timestamp.optional(),
  spouse: SpouseSchema.optional(),
});

const taxYear = wholeNumber(TAX_YEAR.min, TAX_YEAR.max, `a year from ${TAX_YEAR.min} to ${TAX_YEAR.max}`);

const DocumentSchema = object({
  id: recordId,
  account_id: recordId,
  filename: nonBlank(FILENAME_MAX_CHARACTERS).refine((value) => !/[/\\]/.test(value), 'must be a file name without / or \\'),
  tax_year: taxYear,
  description: multilineText(DESCRIPTION_MAX_CHARACTERS).default(''),
  file_type: oneOf(DOCUMENT_MEDIA_TYPES).default(DEFAULT_FILE_TYPE),
  content: z.string({ error: required('a string') }).optional(),
  content_base64: z
    .string({ error: required('a string') })
    .base64('must be base64 (standard alphabet, with padding)')
    .optional(),
  uploaded_at: timestamp.optional(),
}).refine((document) => document.content === undefined || document.content_base64 === undefined, {
  message: 'give either content or content_base64, not both',
  path: ['content_base64'],
});

const OutstandingItemSchema = object({
  type: oneOf(OUTSTANDING_ITEM_TYPES),
  description: nonBlank(ITEM_DESCRIPTION_MAX_CHARACTERS),
  priority: oneOf(OUTSTANDING_ITEM_PRIORITIES),
  requested_at: timestamp.optional(),
});

const DeliverableSchema = object({
  id: recordId,
  document_id: recordId,
  title: nonBlank(TITLE_MAX_CHARACTERS),
  status: oneOf(DELIVERABLE_STATUSES),
  summary: multilineText(SUMMARY_MAX_CHARACTERS).default(''),
  prepared_date: timestamp.optional(),
  view_link_hours: wholeNumber(VIEW_LINK_HOURS.min, VIEW_LINK_HOURS.max, VIEW_LINK_HOURS_RULE).default(VIEW_LINK_HOURS.default),
});

const ProjectSchema = object({
  id: recordId,
  account_id: recordId,
  type: oneOf(PROJECT_TYPES),
  tax_year: taxYear,
  status: oneOf(PROJECT_STATUSES),
  progress_percentage: wholeNumber(0, 100, 'an integer from 0 to 100'),
  created_at: timestamp.optional(),
  estimated_completion: timestamp.nullable().optional(),
  last_updated: timestamp.optional(),
  outstanding_items: list(OutstandingItemSchema).default([]),
  deliverable: DeliverableSchema.optional(),
});

export const FixtureSchema = z
  .strictObject(
    {
      partners: list(PartnerSchema).min(1, 'must list at least one partner (the mock needs a key to be usable)'),
      accounts: list(AccountSchema).default([]),
      documents: list(DocumentSchema).default([]),
      projects: list(ProjectSchema).default([]),
    },
    { error: 'must be a JSON object with partners, accounts, documents and projects' },
  )
  .superRefine(checkReferences);

/** A fixture as parsed: defaults filled in, references checked. */
export type Fixture = z.output<typeof FixtureSchema>;
/** A fixture as written in a seed file. */
export type FixtureInput = z.input<typeof FixtureSchema>;

/** Every problem of a fixture, one `path: rule` per line, prefixed with the file when there is one. */
export class FixtureError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'FixtureError';
  }
}

const MAX_REPORTED_PROBLEMS = 20;

export function parseFixture(json: unknown, source?: string): Fixture {
  const result = FixtureSchema.safeParse(json);
  if (result.success) return result.data;
  const prefix = source === undefined ? '' : `${source}: `;
  const problems = result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => `${prefix}${formatPath([...issue.path, key])}: is not a field of the fixture format`)
      : [`${prefix}${formatPath(issue.path)}: ${issue.message}`],
  );
  const shown = problems.slice(0, MAX_REPORTED_PROBLEMS);
  if (problems.length > shown.length) shown.push(`${prefix}(${problems.length - shown.length} more problems not shown)`);
  throw new FixtureError(shown);
}

export async function loadFixtureFile(path: string): Promise<Fixture> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (error) {
    throw new FixtureError([`${path}: cannot read the file (${describeFsError(error)})`]);
  }
  const withoutByteOrderMark = raw.replace(/^\uFEFF/, '');
  let json: unknown;
  try {
    json = JSON.parse(withoutByteOrderMark);
  } catch (error) {
    throw new FixtureError([`${path}: ${describeJsonError(withoutByteOrderMark, error)}`]);
  }
  return parseFixture(json, path);
}

/** `accounts[2].spouse.email`, as a reader finds it in the file. */
function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`)).join('');
}

function describeFsError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message : String(error);
}

/** Where and why JSON is invalid, as a line and a column: Node's own message varies by version and often has neither. */
function describeJsonError(raw: string, error: unknown): string {
  const found = findJsonSyntaxError(raw);
  if (!found) return `invalid JSON: ${error instanceof Error ? error.message : String(error)}`;
  const before = raw.slice(0, found.position).split('\n');
  return `invalid JSON at line ${before.length}, column ${(before.at(-1) ?? '').length + 1}: ${found.reason}`;
}

/** A JSON reader that only finds the first syntax error (the text is known to be invalid). */
function findJsonSyntaxError(text: string): { position: number; reason: string } | undefined {
  let at = 0;
  class Syntax extends Error {
    constructor(readonly reason: string) {
      super(reason);
    }
  }
  const describe = () => (at >= text.length ? 'the file ends too early' : `unexpected ${JSON.stringify(text[at])}`);
  const fail = (expected: string): never => {
    throw new Syntax(`expected ${expected}, found ${at >= text.length ? 'the end of the file' : JSON.stringify(text[at])}`);
  };
  const skipSpace = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at += 1;
  };
  const expect = (character: string, expected: string) => {
    skipSpace();
    if (text[at] !== character) fail(expected);
    at += 1;
  };
  const readString = () => {
    const match = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(at));
    if (!match) fail('a complete string in double quotes');
    at += match![0].length;
  };
  const readValue = (): void => {
    skipSpace();
    const character = text[at];
    if (character === '{') {
      at += 1;
      skipSpace();
      if (text[at] === '}') return void (at += 1);
      for (;;) {
        skipSpace();
        if (text[at] !== '"') fail('a property name in double quotes');
        readString();
        expect(':', "':' after the property name");
        readValue();
        skipSpace();
        if (text[at] === '}') return void (at += 1);
        expect(',', "',' or '}' after the property value");
      }
    }
    if (character === '[') {
      at += 1;
      skipSpace();
      if (text[at] === ']') return void (at += 1);
      for (;;) {
        readValue();
        skipSpace();
        if (text[at] === ']') return void (at += 1);
        expect(',', "',' or ']' after the array element");
      }
    }
    if (character === '"') return readString();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at));
    if (!literal) throw new Syntax(at >= text.length ? 'the file ends too early' : `${describe()} where a value should be`);
    at += literal[0].length;
  };
  try {
    readValue();
    skipSpace();
    if (at < text.length) throw new Syntax(`${describe()} after the end of the JSON value`);
  } catch (error) {
    if (error instanceof Syntax) return { position: at, reason: error.reason };
    throw error;
  }
  return undefined;
}

type Issue = { path: PropertyKey[]; message: string };
type Context = { addIssue(issue: { code: 'custom'; path: PropertyKey[]; message: string }): void };

/** Ids unique per kind, references that exist, emails unique across the service. */
function checkReferences(fixture: Fixture, context: Context): void {
  const issues: Issue[] = [];
  const problem = (path: PropertyKey[], message: string) => issues.push({ path, message });
  const partners = indexById(fixture.partners, 'partners', problem);
  const accounts = indexById(fixture.accounts, 'accounts', problem);
  const documents = indexById(fixture.documents, 'documents', problem);
  indexById(fixture.projects, 'projects', problem);

  const keys = new Map<string, string>();
  fixture.partners.forEach((partner, p) =>
    partner.api_keys.forEach((apiKey, k) => {
      const first = keys.get(apiKey.key);
      if (first) problem(['partners', p, 'api_keys', k, 'key'], `duplicate key (the same as ${first}.key)`);
      else keys.set(apiKey.key, `partners[${p}].api_keys[${k}]`);
    }),
  );

  const emails = new Map<string, string>();
  const claimEmail = (address: string, path: PropertyKey[]) => {
    const first = emails.get(address.toLowerCase());
    if (first) problem(path, `duplicate email ${address} (already used by ${first}; emails are unique across the service, ignoring case)`);
    else emails.set(address.toLowerCase(), formatPath(path));
  };
  fixture.accounts.forEach((account, a) => {
    if (!partners.has(account.partner_id)) problem(['accounts', a, 'partner_id'], `no partner with id ${account.partner_id}`);
    claimEmail(account.email, ['accounts', a, 'email']);
    if (account.spouse) claimEmail(account.spouse.email, ['accounts', a, 'spouse', 'email']);
  });

  fixture.documents.forEach((document, d) => {
    if (!accounts.has(document.account_id)) problem(['documents', d, 'account_id'], `no account with id ${document.account_id}`);
  });

  const deliverableIds = new Map<number, string>();
  const deliveredDocuments = new Map<number, string>();
  fixture.projects.forEach((project, p) => {
    if (!accounts.has(project.account_id)) problem(['projects', p, 'account_id'], `no account with id ${project.account_id}`);
    const deliverable = project.deliverable;
    if (!deliverable) return;
    const where = `projects[${p}].deliverable`;
    const firstWithId = deliverableIds.get(deliverable.id);
    if (firstWithId) problem(['projects', p, 'deliverable', 'id'], `duplicate id ${deliverable.id} (also ${firstWithId})`);
    else deliverableIds.set(deliverable.id, where);
    const documentPath = ['projects', p, 'deliverable', 'document_id'];
    const document = documents.get(deliverable.document_id);
    if (!document) {
      problem(documentPath, `no document with id ${deliverable.document_id}`);
    } else if (document.account_id !== project.account_id) {
      problem(documentPath, `document ${document.id} belongs to account ${document.account_id}, not to the project's account ${project.account_id}`);
    } else if (deliveredDocuments.has(document.id)) {
      problem(documentPath, `document ${document.id} is already the file of ${deliveredDocuments.get(document.id)}`);
    } else {
      deliveredDocuments.set(document.id, where);
    }
  });

  for (const issue of issues) context.addIssue({ code: 'custom', ...issue });
}

function indexById<T extends { id: number }>(records: T[], kind: string, problem: (path: PropertyKey[], message: string) => void): Map<number, T> {
  const byId = new Map<number, T>();
  const firstIndex = new Map<number, number>();
  records.forEach((record, index) => {
    const first = firstIndex.get(record.id);
    if (first !== undefined) return problem([kind, index, 'id'], `duplicate id ${record.id} (also ${kind}[${first}])`);
    firstIndex.set(record.id, index);
    byId.set(record.id, record);
  });
  return byId;
}

/** An ISO timestamp as is (normalised), or a relative one against `now`; undefined when neither. */
export function resolveTimestamp(value: string, now: Date): string | undefined {
  const relative = RELATIVE_TIME.exec(value);
  if (relative) {
    const [, sign, amount, unit] = relative;
    if (sign === undefined) return now.toISOString();
    const offset = Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
    return new Date(now.getTime() + (sign === '-' ? -offset : offset)).toISOString();
  }
  // A full date and time with an offset: a bare date or a local time would depend on the machine.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : new Date(parsed).toISOString();
}

export interface SeedBlob {
  documentId: number;
  /** Name of the blob the document record points at. */
  blob: string;
  content: Buffer;
}

/**
 * The mock's state at load time `now`: keys hashed, users and outstanding items numbered, omitted
 * timestamps set to `now`, a fresh signing secret. The blobs are for the store to write; their
 * names are fresh on every call, so a reset never overwrites a file the previous state points at.
 */
export function stateFromFixture(fixture: Fixture, now: Date): { state: MockState; blobs: SeedBlob[] } {
  // The fixture was validated, so every timestamp resolves; an omitted one means the load time.
  const at = (value: string | undefined) => (value === undefined ? undefined : resolveTimestamp(value, now)) ?? now.toISOString();
  const seedRun = randomBytes(6).toString('hex');

  const users: UserRecord[] = [];
  const accounts = fixture.accounts.map(({ spouse, created_at, ...account }) => {
    const joined = { account_id: account.id, created_at: at(created_at) };
    const { email, first_name, last_name } = account;
    users.push({ id: users.length + 1, ...joined, role: 'primary', email, first_name, last_name, spouse_status: null });
    if (spouse) {
      const { status, ...person } = spouse;
      users.push({ id: users.length + 1, ...joined, role: 'spouse', ...person, spouse_status: status });
    }
    return { ...account, created_at: joined.created_at };
  });

  const blobs: SeedBlob[] = [];
  const documents = fixture.documents.map(({ content, content_base64, uploaded_at, ...document }) => {
    const bytes =
      content_base64 === undefined
        ? Buffer.from(content ?? `Mock document ${document.filename} (tax year ${document.tax_year}).\n`, 'utf8')
        : Buffer.from(content_base64, 'base64');
    const blob = `seed-${seedRun}-${document.id}`;
    blobs.push({ documentId: document.id, blob, content: bytes });
    return { ...document, file_size: bytes.length, uploaded_at: at(uploaded_at), blob };
  });

  const outstandingItems: OutstandingItemRecord[] = [];
  const deliverables: DeliverableRecord[] = [];
  const projects = fixture.projects.map((projectInFixture) => {
    const { outstanding_items, deliverable, created_at, estimated_completion, last_updated, ...project } = projectInFixture;
    const created = at(created_at);
    for (const { requested_at, ...item } of outstanding_items) {
      outstandingItems.push({ id: outstandingItems.length + 1, project_id: project.id, ...item, requested_at: at(requested_at) });
    }
    if (deliverable) {
      const { prepared_date, ...fields } = deliverable;
      deliverables.push({ ...fields, project_id: project.id, prepared_date: at(prepared_date) });
    }
    return {
      ...project,
      created_at: created,
      estimated_completion: estimated_completion == null ? null : at(estimated_completion),
      last_updated: last_updated === undefined ? created : at(last_updated),
    };
  });

  const nextAfter = (records: Array<{ id: number }>) => records.reduce((largest, record) => Math.max(largest, record.id), 0) + 1;
  const nextIds: Record<IdKind, number> = {
    partner: nextAfter(fixture.partners),
    account: nextAfter(accounts),
    user: users.length + 1,
    loginLink: 1,
    document: nextAfter(documents),
    project: nextAfter(projects),
    outstandingItem: outstandingItems.length + 1,
    deliverable: nextAfter(deliverables),
    email: 1,
  };

  const state: MockState = {
    partners: fixture.partners.map(({ id, name, permitted_redirect_domains }) => ({
      id,
      name,
      permitted_redirect_domains: [...permitted_redirect_domains],
    })),
    apiKeys: fixture.partners.flatMap((partner) =>
      partner.api_keys.map((apiKey) => ({
        key_sha256: sha256Hex(apiKey.key),
        redacted: redactApiKey(apiKey.key),
        partner_id: partner.id,
        label: apiKey.label,
        permissions: [...apiKey.permissions],
        expires_at: apiKey.expires_at === null ? null : at(apiKey.expires_at),
      })),
    ),
    accounts,
    users,
    loginLinks: [],
    documents,
    projects,
    outstandingItems,
    deliverables,
    outbox: [],
    nextIds,
    clockOffsetMs: 0,
    signingSecret: randomBytes(32).toString('base64url'),
  };
  return { state, blobs };
}
