import * as z from 'zod';
import { endpoints, type EndpointName, type ResponseOf } from '../contract/endpoints';
import { describeFieldErrors, fieldErrors } from '../contract/rules';

/**
 * The client reads answers by what the contract guarantees, not by what our mock sends. Each
 * response schema of the contract is turned here, and only here, into its tolerant form:
 * - an `id` is required (the contract promises at least `id` even of an upload), and so is a
 *   list's array (`documents`, `projects`, `deliverables`); nothing is required of an answer to a
 *   write, which the service has acknowledged whatever else it says;
 * - every other field may be missing or null;
 * - fields the contract does not name are kept (the objects stay loose), for `--json`.
 * The mock builds its answers with the strict schemas of src/contract/ themselves.
 */

/** The array of each list answer, which the items are read from one by one. */
export const LIST_KEYS = { listDocuments: 'documents', listProjects: 'projects', listDeliverables: 'deliverables' } as const;
export type ListEndpoint = keyof typeof LIST_KEYS;

/** Endpoints that change something: an acknowledged (2xx) answer never fails them. */
const WRITE_ENDPOINTS = ['createAccount', 'createLoginLink', 'uploadDocument'] as const;
type WriteEndpoint = (typeof WRITE_ENDPOINTS)[number];

/** `T` with only `R` required and everything else optional and nullable, deeply. */
export type Tolerant<T, R extends PropertyKey> = T extends ReadonlyArray<infer U>
  ? Array<Tolerant<U, R>>
  : T extends object
    ? { [K in keyof T as K extends R ? K : never]: Tolerant<T[K], R> } & { [K in keyof T as K extends R ? never : K]?: Tolerant<T[K], R> | null }
    : T;

type ListItemOf<N extends ListEndpoint> = ResponseOf<N>[(typeof LIST_KEYS)[N]] extends ReadonlyArray<infer U> ? U : never;

export type TolerantResponseOf<N extends EndpointName> = N extends WriteEndpoint
  ? Tolerant<ResponseOf<N>, never>
  : N extends ListEndpoint
    ? Tolerant<ResponseOf<N>, 'id' | (typeof LIST_KEYS)[N]>
    : Tolerant<ResponseOf<N>, 'id'>;
export type TolerantItemOf<N extends ListEndpoint> = Tolerant<ListItemOf<N>, 'id'>;

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap() as z.ZodType;
  return current;
}

/** The tolerant form of one schema: `required` names the fields kept required at every level. */
export function tolerantSchema(schema: z.ZodType, required: ReadonlySet<string>): z.ZodType {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodArray) return z.array(tolerantSchema(inner.element as z.ZodType, required));
  if (!(inner instanceof z.ZodObject)) return inner;
  const shape = Object.fromEntries(
    Object.entries(inner.shape as Record<string, z.ZodType>).map(([name, field]) => {
      const tolerant = tolerantSchema(field, required);
      return [name, required.has(name) ? tolerant : tolerant.nullish()];
    }),
  );
  return z.looseObject(shape);
}

export interface TolerantReader {
  /** The schema of the whole answer (a list's items are checked one by one with `item`). */
  answer: z.ZodType;
  /** Lists only: the array's name and the schema of one item. */
  list?: { key: string; item: z.ZodType };
  /** A write: an answer that does not fit is a warning, never a failure. */
  write: boolean;
  /** Whether the resource has an `id` (a write's answer without one gets a warning). */
  hasId: boolean;
}

function readerFor(name: EndpointName): TolerantReader {
  const response = endpoints[name].response as z.ZodType;
  const write = (WRITE_ENDPOINTS as readonly string[]).includes(name);
  const hasId = 'id' in ((unwrap(response) as z.ZodObject).shape as object);
  if (!(name in LIST_KEYS)) return { answer: tolerantSchema(response, new Set(write ? [] : ['id'])), write, hasId };
  const key = LIST_KEYS[name as ListEndpoint];
  const envelope = unwrap(response) as z.ZodObject;
  const items = unwrap(envelope.shape[key] as z.ZodType) as z.ZodArray;
  const answer = tolerantSchema(envelope.extend({ [key]: z.array(z.unknown()) }), new Set([key]));
  return { answer, list: { key, item: tolerantSchema(items.element as z.ZodType, new Set(['id'])) }, write, hasId };
}

const readers = new Map<EndpointName, TolerantReader>();

/** Built on first use, once per endpoint. */
export function tolerantReader(name: EndpointName): TolerantReader {
  let reader = readers.get(name);
  if (reader === undefined) {
    reader = readerFor(name);
    readers.set(name, reader);
  }
  return reader;
}

/**
 * How the client parses: without zod's JIT, which generates and compiles a function for each
 * object schema on its first parse. A command parses a few documents, so generating costs more
 * than it saves. (The mock, a long-running server, keeps the JIT.)
 */
export const PARSE_WITHOUT_JIT = { jitless: true } as const;

/** `tax_year must be a number`: which fields of a value do not fit, or undefined when it fits. */
export function misfit(schema: z.ZodType, value: unknown): { data: unknown } | { problems: string } {
  const parsed = schema.safeParse(value, PARSE_WITHOUT_JIT);
  return parsed.success ? { data: parsed.data } : { problems: describeFieldErrors(fieldErrors(parsed.error)) };
}
