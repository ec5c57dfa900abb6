import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_STATUSES,
  DELIVERABLE_STATUSES,
  OUTSTANDING_ITEM_PRIORITIES,
  OUTSTANDING_ITEM_TYPES,
  PERMISSIONS,
  PROJECT_STATUSES,
  PROJECT_TYPES,
  redactApiKey,
} from '../../src/contract';
import { sha256Hex } from '../../src/mock/crypto';
import { parseFixture, stateFromFixture } from '../../src/mock/fixture';
import { DEMO_API_KEYS, DEMO_FIXTURE } from '../../src/mock/seed';

/**
 * Other tests and the walkthrough in docs/getting-started.md rely on the demo data having something of every kind;
 * these assertions keep it that way.
 */
const now = new Date('2026-03-01T12:00:00.000Z');
const { state } = stateFromFixture(DEMO_FIXTURE, now);
const acmeAccounts = new Set(state.accounts.filter((account) => account.partner_id === 1).map((account) => account.id));
const acmeProjects = state.projects.filter((project) => acmeAccounts.has(project.account_id));
const keyRecord = (key: string) => state.apiKeys.find((record) => record.key_sha256 === sha256Hex(key));

describe('the demo data', () => {
  it('parses as a fixture (also as JSON, the form of a seed file)', () => {
    expect(parseFixture(JSON.parse(JSON.stringify(DEMO_FIXTURE)))).toEqual(DEMO_FIXTURE);
  });

  it('has two partners, each with a key of all permissions and its redirect domain', () => {
    expect(state.partners).toEqual([
      { id: 1, name: 'Acme Tax Partners', permitted_redirect_domains: ['acme-tax.example'] },
      { id: 2, name: 'Beacon Advisors', permitted_redirect_domains: ['beacon.example'] },
    ]);
    expect(keyRecord(DEMO_API_KEYS.acme)).toMatchObject({ partner_id: 1, permissions: [...PERMISSIONS], expires_at: null });
    expect(keyRecord(DEMO_API_KEYS.beacon)).toMatchObject({ partner_id: 2, permissions: [...PERMISSIONS], expires_at: null });
  });

  it('has an expired key and a read-only key for Acme', () => {
    expect(keyRecord(DEMO_API_KEYS.expired)).toMatchObject({ partner_id: 1, expires_at: '2025-01-01T00:00:00.000Z', redacted: redactApiKey(DEMO_API_KEYS.expired) });
    const readOnly = keyRecord(DEMO_API_KEYS.readOnly)!;
    expect(readOnly.partner_id).toBe(1);
    expect(readOnly.permissions).toEqual(PERMISSIONS.filter((permission) => permission.endsWith(':read')));
  });

  it('gives Acme accounts in every status, one with an invited spouse and one with a pending spouse', () => {
    const statuses = state.accounts.filter((account) => acmeAccounts.has(account.id)).map((account) => account.status);
    expect(new Set(statuses)).toEqual(new Set(ACCOUNT_STATUSES));
    const spouses = state.users.filter((user) => user.role === 'spouse');
    expect(spouses.map((user) => [user.account_id, user.spouse_status])).toEqual([
      [1001, 'invited'],
      [1006, 'pending'],
    ]);
    expect(state.accounts.find((account) => account.status === 'suspended')!.id).toBe(1003);
  });

  it('has an active Acme account with nothing yet', () => {
    expect(state.accounts.find((account) => account.id === 1005)!.status).toBe('active');
    expect(state.projects.some((project) => project.account_id === 1005)).toBe(false);
    expect(state.documents.some((document) => document.account_id === 1005)).toBe(false);
  });

  it('gives Acme projects of every type and in every state, in tax years 2024 and 2025', () => {
    expect(new Set(acmeProjects.map((project) => project.type))).toEqual(new Set(PROJECT_TYPES));
    expect(new Set(acmeProjects.map((project) => project.status))).toEqual(new Set(PROJECT_STATUSES));
    expect(new Set(acmeProjects.map((project) => project.tax_year))).toEqual(new Set([2024, 2025]));
  });

  it('has outstanding items of both kinds and every priority, on open projects only', () => {
    expect(new Set(state.outstandingItems.map((item) => item.type))).toEqual(new Set(OUTSTANDING_ITEM_TYPES));
    expect(new Set(state.outstandingItems.map((item) => item.priority))).toEqual(new Set(OUTSTANDING_ITEM_PRIORITIES));
    const statusOf = (projectId: number) => state.projects.find((project) => project.id === projectId)!.status;
    expect(new Set(state.outstandingItems.map((item) => statusOf(item.project_id)))).toEqual(new Set(['waiting_on_client', 'in_progress']));
  });

  it("has deliverables in every status, each with its own document of the project's account", () => {
    const acmeDeliverables = state.deliverables.filter((deliverable) => acmeProjects.some((project) => project.id === deliverable.project_id));
    expect(new Set(acmeDeliverables.map((deliverable) => deliverable.status))).toEqual(new Set(DELIVERABLE_STATUSES));
    for (const deliverable of state.deliverables) {
      const project = state.projects.find((candidate) => candidate.id === deliverable.project_id)!;
      const document = state.documents.find((candidate) => candidate.id === deliverable.document_id)!;
      expect(document.account_id).toBe(project.account_id);
      expect(document.file_size).toBeGreaterThan(0);
    }
    expect(new Set(state.deliverables.map((deliverable) => deliverable.document_id)).size).toBe(state.deliverables.length);
  });

  it('leaves some Acme projects without a deliverable (DELIVERABLE_NOT_FOUND)', () => {
    const withDeliverable = new Set(state.deliverables.map((deliverable) => deliverable.project_id));
    expect(acmeProjects.filter((project) => !withDeliverable.has(project.id)).map((project) => project.id)).toEqual([5001, 5005, 5007]);
  });

  it('has uploaded documents of one account in two tax years, so a tax-year filter shows something', () => {
    const years = state.documents.filter((document) => document.account_id === 1001).map((document) => document.tax_year);
    expect(years.filter((year) => year === 2024).length).toBeGreaterThanOrEqual(2);
    expect(years.filter((year) => year === 2025).length).toBeGreaterThanOrEqual(2);
  });

  it('gives Beacon an account with a project, a deliverable and a document', () => {
    expect(state.accounts.filter((account) => account.partner_id === 2).map((account) => account.id)).toEqual([2001]);
    expect(state.projects.filter((project) => project.account_id === 2001).map((project) => project.id)).toEqual([6001]);
    expect(state.deliverables.find((deliverable) => deliverable.project_id === 6001)!.id).toBe(9501);
    expect(state.documents.filter((document) => document.account_id === 2001).map((document) => document.id)).toEqual([8001, 8101]);
  });

  it('uses example addresses only, and times relative to now', () => {
    const emails = state.users.map((user) => user.email);
    expect(emails.every((email) => /@example\.(com|test)$/.test(email))).toBe(true);
    expect(state.projects.find((project) => project.id === 5001)!.estimated_completion).toBe('2026-03-15T12:00:00.000Z');
  });
});
