import { PERMISSIONS } from '../contract';
import { parseFixture, type FixtureInput } from './fixture';

/**
 * The demo data `serve --mock` starts with: enough that every command has something to show.
 * Partner 1 (Acme) has accounts in every status, projects of every type in every state, open
 * items of both kinds and every priority, deliverables in every status; partner 2 (Beacon) has a
 * little of its own, to try partner isolation. Times are relative, so the data never goes stale.
 * These are mock keys, published on purpose.
 */
export const DEMO_API_KEYS = {
  acme: 'tpk_mockAcmeLiveKey0000000000001',
  beacon: 'tpk_mockBeaconLiveKey00000000002',
  expired: 'tpk_mockAcmeExpiredKey000000003',
  readOnly: 'tpk_mockAcmeReadOnlyKey00000004',
} as const;

const READ_PERMISSIONS = PERMISSIONS.filter((permission) => permission.endsWith(':read'));

/** A deliverable's file: a short text a person can open, named after the project. */
function deliverableDocument(id: number, accountId: number, filename: string, taxYear: number, title: string, preparedAt: string) {
  return {
    id,
    account_id: accountId,
    filename,
    tax_year: taxYear,
    description: `Deliverable: ${title}`,
    file_type: 'text/plain' as const,
    content: `${title}\nTax year ${taxYear}\n\nPrepared by your tax team. This is mock data for trying taxprep.\n`,
    uploaded_at: preparedAt,
  };
}

function uploadedDocument(id: number, accountId: number, filename: string, taxYear: number, description: string, uploadedAt: string) {
  const fileType = filename.endsWith('.csv') ? ('text/csv' as const) : ('text/plain' as const);
  return { id, account_id: accountId, filename, tax_year: taxYear, description, file_type: fileType, content: `${description}\n(mock content of ${filename})\n`, uploaded_at: uploadedAt };
}

const demo: FixtureInput = {
  partners: [
    {
      id: 1,
      name: 'Acme Tax Partners',
      permitted_redirect_domains: ['acme-tax.example'],
      api_keys: [
        { key: DEMO_API_KEYS.acme, label: 'Acme production key' },
        { key: DEMO_API_KEYS.expired, label: 'Acme key that expired', expires_at: '2025-01-01T00:00:00Z' },
        { key: DEMO_API_KEYS.readOnly, label: 'Acme read-only key', permissions: READ_PERMISSIONS },
      ],
    },
    {
      id: 2,
      name: 'Beacon Advisors',
      permitted_redirect_domains: ['beacon.example'],
      api_keys: [{ key: DEMO_API_KEYS.beacon, label: 'Beacon production key' }],
    },
  ],
  accounts: [
    {
      id: 1001,
      partner_id: 1,
      email: 'maria.gonzalez@example.com',
      first_name: 'María',
      last_name: 'González',
      status: 'active',
      created_at: '-120d',
      spouse: { email: 'daniel.gonzalez@example.com', first_name: 'Daniel', last_name: 'González', status: 'invited' },
    },
    { id: 1002, partner_id: 1, email: 'james.okafor@example.com', first_name: 'James', last_name: 'Okafor', status: 'onboarding', created_at: '-10d' },
    { id: 1003, partner_id: 1, email: 'priya.raman@example.com', first_name: 'Priya', last_name: 'Raman', status: 'suspended', created_at: '-200d' },
    { id: 1004, partner_id: 1, email: 'thomas.becker@example.com', first_name: 'Thomas', last_name: 'Becker', status: 'completed', created_at: '-400d' },
    { id: 1005, partner_id: 1, email: 'aiko.tanaka@example.com', first_name: 'Aiko', last_name: 'Tanaka', status: 'active', created_at: '-2d' },
    {
      id: 1006,
      partner_id: 1,
      email: 'olivia.chen@example.com',
      first_name: 'Olivia',
      last_name: 'Chen',
      status: 'active',
      created_at: '-45d',
      spouse: { email: 'marcus.chen@example.com', first_name: 'Marcus', last_name: 'Chen', status: 'pending' },
    },
    { id: 2001, partner_id: 2, email: 'noah.williams@example.com', first_name: 'Noah', last_name: 'Williams', status: 'active', created_at: '-60d' },
  ],
  documents: [
    uploadedDocument(7001, 1001, 'w2-2024-northwind.txt', 2024, 'W-2 2024 from Northwind Traders', '-110d'),
    uploadedDocument(7002, 1001, '1099-int-2024-first-bank.txt', 2024, '1099-INT 2024 from First Bank', '-108d'),
    uploadedDocument(7003, 1001, 'w2-2025-northwind.txt', 2025, 'W-2 2025 from Northwind Traders', '-20d'),
    uploadedDocument(7004, 1001, '1099-int-2025-first-bank.txt', 2025, '1099-INT 2025 from First Bank', '-18d'),
    uploadedDocument(7005, 1001, 'charitable-receipts-2025.csv', 2025, 'Charitable donation receipts 2025', '-5d'),
    uploadedDocument(7006, 1002, 'rsu-statement-2025.txt', 2025, 'RSU vesting statement 2025', '-8d'),
    uploadedDocument(7007, 1004, 'w2-2024-contoso.txt', 2024, 'W-2 2024 from Contoso', '-390d'),
    uploadedDocument(7008, 1003, 'business-receipts-2024.csv', 2024, 'Business expense receipts 2024', '-180d'),
    deliverableDocument(7101, 1001, 'quarterly-estimate-2025-q3.txt', 2025, 'Q3 2025 estimated tax payment', '-3d'),
    deliverableDocument(7102, 1001, 'tax-return-2024.txt', 2024, '2024 federal and state tax return', '-95d'),
    deliverableDocument(7103, 1002, 'tax-plan-2025.txt', 2025, '2025 tax plan', '-1d'),
    deliverableDocument(7104, 1004, 'tax-return-2024.txt', 2024, '2024 federal tax return', '-300d'),
    deliverableDocument(7105, 1006, 'equity-plan-2024.txt', 2024, '2024 equity compensation plan', '-12d'),
    uploadedDocument(8001, 2001, 'w2-2025-fabrikam.txt', 2025, 'W-2 2025 from Fabrikam', '-30d'),
    deliverableDocument(8101, 2001, 'tax-return-2025-draft.txt', 2025, '2025 tax return (draft)', '-2d'),
  ],
  projects: [
    {
      id: 5001,
      account_id: 1001,
      type: 'tax_return',
      tax_year: 2025,
      status: 'waiting_on_client',
      progress_percentage: 20,
      created_at: '-30d',
      estimated_completion: '+14d',
      last_updated: '-2d',
      outstanding_items: [
        { type: 'missing_document', description: 'Form 1098 mortgage interest statement for 2025', priority: 'high', requested_at: '-7d' },
        { type: 'client_request', description: 'Confirm the dependents to claim this year', priority: 'medium', requested_at: '-5d' },
        { type: 'missing_document', description: 'Receipts for home office expenses', priority: 'low', requested_at: '-2d' },
      ],
    },
    {
      id: 5002,
      account_id: 1001,
      type: 'quarterly_estimate',
      tax_year: 2025,
      status: 'in_progress',
      progress_percentage: 60,
      created_at: '-40d',
      estimated_completion: '+7d',
      last_updated: '-3d',
      outstanding_items: [{ type: 'client_request', description: 'Estimate of fourth-quarter freelance income', priority: 'low', requested_at: '-4d' }],
      deliverable: {
        id: 9001,
        document_id: 7101,
        title: 'Q3 2025 estimated tax payment',
        status: 'draft',
        summary: 'Draft of the third-quarter estimate: federal and state payments with due dates.',
        prepared_date: '-3d',
      },
    },
    {
      id: 5003,
      account_id: 1001,
      type: 'tax_return',
      tax_year: 2024,
      status: 'completed',
      progress_percentage: 100,
      created_at: '-115d',
      estimated_completion: '-95d',
      last_updated: '-90d',
      deliverable: {
        id: 9002,
        document_id: 7102,
        title: '2024 federal and state tax return',
        status: 'delivered',
        summary: 'Joint return filed; refund of $1,240 expected.',
        prepared_date: '-95d',
      },
    },
    {
      id: 5004,
      account_id: 1002,
      type: 'tax_planning',
      tax_year: 2025,
      status: 'in_review',
      progress_percentage: 90,
      created_at: '-9d',
      estimated_completion: '+3d',
      last_updated: '-1d',
      deliverable: {
        id: 9003,
        document_id: 7103,
        title: '2025 tax plan',
        status: 'completed',
        summary: 'Withholding adjustments and retirement contributions for 2025.',
        prepared_date: '-1d',
      },
    },
    {
      id: 5005,
      account_id: 1002,
      type: 'equity_planning',
      tax_year: 2025,
      status: 'waiting_on_client',
      progress_percentage: 10,
      created_at: '-9d',
      estimated_completion: '+30d',
      last_updated: '-6d',
      outstanding_items: [
        { type: 'missing_document', description: 'RSU grant agreements', priority: 'high', requested_at: '-6d' },
        { type: 'client_request', description: 'Planned dates of option exercises', priority: 'high', requested_at: '-6d' },
      ],
    },
    {
      id: 5006,
      account_id: 1004,
      type: 'tax_return',
      tax_year: 2024,
      status: 'completed',
      progress_percentage: 100,
      created_at: '-390d',
      estimated_completion: '-300d',
      last_updated: '-300d',
      deliverable: {
        id: 9004,
        document_id: 7104,
        title: '2024 federal tax return',
        status: 'delivered',
        summary: 'Return filed; balance due paid in full.',
        prepared_date: '-300d',
      },
    },
    {
      id: 5007,
      account_id: 1003,
      type: 'quarterly_estimate',
      tax_year: 2024,
      status: 'in_progress',
      progress_percentage: 40,
      created_at: '-190d',
      estimated_completion: '+21d',
      last_updated: '-150d',
      outstanding_items: [{ type: 'missing_document', description: 'Third-quarter 1099-NEC forms', priority: 'medium', requested_at: '-150d' }],
    },
    {
      id: 5008,
      account_id: 1006,
      type: 'equity_planning',
      tax_year: 2024,
      status: 'in_review',
      progress_percentage: 80,
      created_at: '-40d',
      estimated_completion: '+5d',
      last_updated: '-12d',
      deliverable: {
        id: 9005,
        document_id: 7105,
        title: '2024 equity compensation plan',
        status: 'completed',
        summary: 'ESPP sale timing and AMT exposure of the ISO exercise.',
        prepared_date: '-12d',
      },
    },
    {
      id: 6001,
      account_id: 2001,
      type: 'tax_return',
      tax_year: 2025,
      status: 'in_progress',
      progress_percentage: 50,
      created_at: '-28d',
      estimated_completion: '+10d',
      last_updated: '-2d',
      outstanding_items: [{ type: 'client_request', description: 'Confirm the new home address', priority: 'medium', requested_at: '-2d' }],
      deliverable: {
        id: 9501,
        document_id: 8101,
        title: '2025 tax return (draft)',
        status: 'draft',
        summary: 'First draft for review.',
        prepared_date: '-2d',
      },
    },
  ],
};

export const DEMO_FIXTURE = parseFixture(demo, 'demo data');
