import type { FastifyInstance, FastifyReply } from 'fastify';
import { DELIVERABLE_TYPE_OF_PROJECT, pathId } from '../contract';
import type { MockDeps } from './deps';
import { indexesOf } from './indexes';
import { openLoginLink, type LoginLinkKind } from './loginLinks';
import { projectOfDeliverable } from './routes/deliverables';
import { checkViewToken } from './viewLinks';

/**
 * The client web application's pages that the service's links point at (`{app_url}`): login
 * links open once, view links until they expire. Small HTML pages, no API key; every value shown
 * is escaped.
 */

const LOGIN_LINK_KINDS: readonly LoginLinkKind[] = ['partner-login', 'user-login'];

const LOGIN_LINK_GONE = {
  expired: 'This login link has expired. Ask your tax preparer for a new one.',
  used: 'This login link was already used: each link works only once. Ask your tax preparer for a new one if you need to sign in again.',
  replaced: 'This login link was replaced by a newer one. Use the most recent link you received.',
} as const;

export function registerAppRoutes(app: FastifyInstance, deps: MockDeps): void {
  for (const kind of LOGIN_LINK_KINDS) {
    app.get<{ Params: { token: string } }>(`/auth/${kind}/:token`, async (request, reply) => {
      const opened = await openLoginLink(deps, kind, request.params.token);
      switch (opened.status) {
        case 'ok':
          if (opened.redirect_url !== null) return reply.redirect(opened.redirect_url, 302);
          return sendPage(reply, 200, 'Signed in', [`Signed in as ${opened.user_email}.`, 'You can now set up your permanent sign-in.']);
        case 'unknown':
          return sendPage(reply, 404, 'Link not found', ['This login link is not valid. Check that the whole link was copied.']);
        default:
          return sendPage(reply, 410, 'Link no longer valid', [LOGIN_LINK_GONE[opened.status]]);
      }
    });
  }

  app.get<{ Params: { deliverable_id: string }; Querystring: { token?: string } }>('/deliverables/:deliverable_id/view', (request, reply) => {
    const id = pathId.safeParse(request.params.deliverable_id);
    const deliverable = id.success ? indexesOf(deps.store.state).deliverable(id.data) : undefined;
    if (!deliverable) return sendPage(reply, 404, 'Deliverable not found', ['There is no such deliverable.']);
    switch (checkViewToken(deps, deliverable.id, request.query.token ?? '')) {
      case 'invalid':
        return sendPage(reply, 403, 'Link not valid', ['This view link is not valid for this deliverable. Check that the whole link was copied.']);
      case 'expired':
        return sendPage(reply, 410, 'Link expired', ['This view link has expired. Ask your tax preparer for a new one.']);
      case 'valid': {
        const project = projectOfDeliverable(deps, deliverable);
        return sendPage(reply, 200, deliverable.title, [
          `${DELIVERABLE_TYPE_OF_PROJECT[project.type].replaceAll('_', ' ')} for tax year ${project.tax_year} (${deliverable.status}).`,
          deliverable.summary,
        ]);
      }
    }
  });
}

function sendPage(reply: FastifyReply, status: number, title: string, paragraphs: string[]): FastifyReply {
  const body = paragraphs
    .filter((paragraph) => paragraph !== '')
    .map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`)
    .join('\n');
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    // Links carry their token in the URL: keep it out of caches and out of other sites' Referer.
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send(
      `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n` +
        `<body>\n<h1>${escapeHtml(title)}</h1>\n${body}\n</body>\n</html>\n`,
    );
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}
