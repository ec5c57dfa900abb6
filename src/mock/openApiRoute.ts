import type { FastifyInstance } from 'fastify';
import { BASE_PATH } from '../contract';
import { openApiDocument } from '../contract/openapi';
import type { MockDeps } from './deps';
import { logAnswer } from './requestLog';

export const OPENAPI_PATH = `${BASE_PATH}/openapi.json`;

/**
 * `GET {base_url}/openapi.json`: the contract as an OpenAPI 3.1 document, for partners' own tools.
 * Like `/health` it needs no key and is not rate-limited: it describes the service, not a partner's
 * data. Generated on the first request (the base URL is known only once the server listens).
 */
export function registerOpenApiRoute(app: FastifyInstance, deps: MockDeps): void {
  let document: string | undefined;
  app.get(OPENAPI_PATH, (request, reply) => {
    document ??= JSON.stringify(openApiDocument({ baseUrl: deps.settings.baseUrl, uploadMaxBytes: deps.settings.uploadMaxBytes }));
    logAnswer(deps, request, reply, 200);
    return reply.type('application/json; charset=utf-8').send(document);
  });
}
