import type { FastifyInstance, FastifyReply } from 'fastify';
import * as z from 'zod';
import { pathId } from '../../contract';
import type { MockDeps } from '../deps';
import { MockError, parseOrThrow } from '../errors';

/**
 * A mock-only control under `/_mock`: one declaration gives the route, its validation (every bad
 * input is a 400 `VALIDATION_ERROR` naming the field) and its line in the `GET /_mock` index.
 */
export interface Control<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below `/_mock`, with `:name` parameters. */
  path: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  /** 200 unless given. */
  successStatus?: 200 | 201;
  handle(input: { params: z.output<P>; query: z.output<Q>; body: z.output<B>; reply: FastifyReply }, deps: MockDeps): unknown;
}

type NoInput = z.ZodUndefined;
// Each control keeps its own schema types; the list only needs to register and describe them.
export type AnyControl = Control<any, any, any>;

/** Declares a control; the identity function lets TypeScript infer the handler's input types. */
export function control<P extends z.ZodType = NoInput, Q extends z.ZodType = NoInput, B extends z.ZodType = NoInput>(
  definition: Control<P, Q, B>,
): Control<P, Q, B> {
  return definition;
}

export const CONTROL_PREFIX = '/_mock';

export function registerControl(app: FastifyInstance, deps: MockDeps, definition: AnyControl): void {
  app.route({
    method: definition.method,
    url: CONTROL_PREFIX + definition.path,
    handler: async (request, reply) => {
      const params = definition.params ? parseOrThrow(definition.params, request.params, 'VALIDATION_ERROR') : undefined;
      const query = definition.query ? parseOrThrow(definition.query, request.query, 'VALIDATION_ERROR') : undefined;
      // A control without required fields may be sent with no body at all.
      const body = definition.body ? parseOrThrow(definition.body, request.body ?? {}, 'VALIDATION_ERROR') : undefined;
      const result = await definition.handle({ params, query, body, reply }, deps);
      if (result === reply) return reply;
      return reply.code(definition.successStatus ?? 200).send(result);
    },
  });
}

/** The path parameter every control names its record by. */
export function idParams<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, pathId])) as Record<K, typeof pathId>);
}

/** For records that only controls address (items, deliverables by id): no contract code exists. */
export function unknownRecord(what: string, id: number, reply: FastifyReply): MockError<'NOT_FOUND'> {
  const { method, url } = reply.request;
  return new MockError('NOT_FOUND', `No ${what} with id ${id} exists.`, { method, path: url.split('?')[0] ?? url });
}
