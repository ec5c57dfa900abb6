import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startMock, type RunningMock } from '../helpers/mock';

/** Demo data: Acme account 1005 (Aiko Tanaka, no spouse), 1001 (María González, spouse Daniel); deliverable 9001 of project 5002. */
let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(async () => {
  await mock.close();
});

interface Page {
  status: number;
  contentType: string | null;
  location: string | null;
  html: string;
}

async function open(url: string): Promise<Page> {
  const response = await fetch(url, { redirect: 'manual' });
  return { status: response.status, contentType: response.headers.get('content-type'), location: response.headers.get('location'), html: await response.text() };
}

async function loginLink(accountId: number, body: Record<string, unknown> = {}): Promise<string> {
  const response = await mock.request(`/accounts/${accountId}/login-link`, { key: mock.keys.acme, body: { send_notification: false, ...body } });
  expect(response.status).toBe(201);
  return response.json.login_link;
}

const advanceClock = (advance: string) => mock.request('/_mock/clock', { body: { advance } });

describe('login links', () => {
  test('a link opens once: 200 "Signed in as <email>", then 410 saying it was used', async () => {
    const link = await loginLink(1005);
    expect(link.startsWith(`${mock.appUrl}/auth/partner-login/`)).toBe(true);

    const first = await open(link);
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/html/);
    expect(first.html).toContain('Signed in as aiko.tanaka@example.com.');

    const second = await open(link);
    expect(second.status).toBe(410);
    expect(second.html).toContain('already used');
  });

  test('an expired link is 410 saying it expired', async () => {
    const link = await loginLink(1005, { expiry_hours: 1 });
    await advanceClock('61m');
    const page = await open(link);
    expect(page.status).toBe(410);
    expect(page.html).toContain('expired');
  });

  test('a replaced link is 410 saying a newer link replaced it; the newer one opens', async () => {
    const older = await loginLink(1005);
    const newer = await loginLink(1005);
    const page = await open(older);
    expect(page.status).toBe(410);
    expect(page.html).toContain('replaced by a newer one');
    expect((await open(newer)).status).toBe(200);
  });

  test('a link with a redirect_url answers 302 to it', async () => {
    const link = await loginLink(1005, { redirect_url: 'https://portal.acme-tax.example/welcome?step=1' });
    const page = await open(link);
    expect(page.status).toBe(302);
    expect(page.location).toBe('https://portal.acme-tax.example/welcome?step=1');
  });

  test("a spouse's link opens on /auth/user-login/ only", async () => {
    const link = await loginLink(1001, { user_email: 'daniel.gonzalez@example.com' });
    expect(link).toContain('/auth/user-login/');
    const token = link.split('/').pop()!;
    expect((await open(`${mock.appUrl}/auth/partner-login/${token}`)).status).toBe(404);
    const page = await open(link);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Signed in as daniel.gonzalez@example.com.');
  });

  test('an unknown token is 404', async () => {
    const page = await open(`${mock.appUrl}/auth/partner-login/not-a-token-we-issued`);
    expect(page.status).toBe(404);
    expect(page.html).toContain('not valid');
  });
});

describe('deliverable view links', () => {
  const viewLinkOf = async (projectId: number) =>
    (await mock.request(`/projects/${projectId}/deliverable`, { key: mock.keys.acme })).json.view_link as string;

  test('a fresh view link shows the deliverable, with every interpolated value escaped', async () => {
    await mock.request('/_mock/deliverables/9001', { body: { title: 'Q3 <script>alert("x")</script> & more' } });
    const page = await open(await viewLinkOf(5002));
    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.html).toContain('Q3 &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more');
    expect(page.html).not.toContain('<script>');
  });

  test('a token of another deliverable, a tampered token or no token is 403; an unknown deliverable 404', async () => {
    const link = new URL(await viewLinkOf(5002));
    const token = link.searchParams.get('token')!;
    const [expiry, signature] = token.split('.');
    const laterExpiry = `${Number(expiry) + 86_400}.${signature}`;

    expect((await open(`${mock.appUrl}/deliverables/9002/view?token=${token}`)).status).toBe(403);
    expect((await open(`${mock.appUrl}/deliverables/9001/view?token=${laterExpiry}`)).status).toBe(403);
    expect((await open(`${mock.appUrl}/deliverables/9001/view`)).status).toBe(403);
    expect((await open(`${mock.appUrl}/deliverables/424242/view?token=${token}`)).status).toBe(404);
    expect((await open(`${mock.appUrl}/deliverables/abc/view?token=${token}`)).status).toBe(404);
  });

  test('a view link stops working when it expires (72 hours by default), and a new read gives a working one', async () => {
    const link = await viewLinkOf(5003);
    await advanceClock('71h');
    expect((await open(link)).status).toBe(200);
    await advanceClock('2h');
    const page = await open(link);
    expect(page.status).toBe(410);
    expect(page.html).toContain('expired');
    expect((await open(await viewLinkOf(5003))).status).toBe(200);
  });
});
