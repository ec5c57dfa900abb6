import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { EndpointName, endpoints } from '../contract';
import type { MockDeps } from './deps';
import type { ApiKeyRecord, PartnerRecord } from './state';

type Spec<N extends EndpointName> = (typeof endpoints)[N];
type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type Field<N extends EndpointName, K extends string> = Spec<N> extends Record<K, infer S> ? Parsed<S> : undefined;

/**
 * What the router hands a contract handler: path, query and JSON body already parsed with the
 * endpoint's schemas from `src/contract/endpoints.ts` (so a handler never sees invalid input),
 * and, for every endpoint but health, the authenticated partner and key. The multipart upload gets
 * `body: undefined` and reads `request` itself.
 */
export type HandlerInput<N extends EndpointName> = {
  params: Field<N, 'params'>;
  query: Field<N, 'query'>;
  body: Spec<N> extends { multipart: true } ? undefined : Field<N, 'body'>;
  request: FastifyRequest;
  reply: FastifyReply;
} & (N extends 'health' ? object : { partner: PartnerRecord; apiKey: ApiKeyRecord });

/** The JSON the endpoint answers with; the router sends it with the endpoint's `successStatus`. */
export type HandlerResult<N extends EndpointName> = z.input<Spec<N>['response']>;

export type Handler<N extends EndpointName> = (
  input: HandlerInput<N>,
  deps: MockDeps,
) => HandlerResult<N> | Promise<HandlerResult<N>>;

export type Handlers = { [N in EndpointName]: Handler<N> };
