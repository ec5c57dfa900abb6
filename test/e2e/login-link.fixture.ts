import type { FixtureInput } from '../../src/mock/fixture';

/** Keys of the batch fixture (never printed in full: the e2e scanner knows them). */
export const BATCH_KEYS = {
  acme: 'tpk_batchAcmeKey0000000000000001',
  beacon: 'tpk_batchBeaconKey000000000000002',
  expired: 'tpk_batchAcmeExpiredKey00000003',
} as const;

export const FIRST_ACCOUNT_ID = 2001;
export const BEACON_ACCOUNT_ID = 9001;
/** Has a spouse, for links to a user other than the primary holder. */
export const SPOUSE_EMAIL = 'spouse.2001@example.com';

/**
 * Acme with `accounts` active clients (ids from 2001; the ids in `suspended` suspended), and
 * Beacon with one client of its own (9001), for access-denied items in a batch.
 */
export function batchFixture(options: { accounts: number; suspended?: number[] }): FixtureInput {
  const suspended = new Set(options.suspended ?? []);
  return {
    partners: [
      {
        id: 1,
        name: 'Acme Tax Partners',
        permitted_redirect_domains: ['acme-tax.example'],
        api_keys: [
          { key: BATCH_KEYS.acme, label: 'acme' },
          { key: BATCH_KEYS.expired, label: 'expired', expires_at: '2025-01-01T00:00:00Z' },
        ],
      },
      { id: 2, name: 'Beacon Advisors', api_keys: [{ key: BATCH_KEYS.beacon, label: 'beacon' }] },
    ],
    accounts: [
      ...Array.from({ length: options.accounts }, (_, index) => {
        const id = FIRST_ACCOUNT_ID + index;
        return {
          id,
          partner_id: 1,
          email: `client.${id}@example.com`,
          first_name: 'Client',
          last_name: String(id),
          status: suspended.has(id) ? ('suspended' as const) : ('active' as const),
          ...(id === FIRST_ACCOUNT_ID ? { spouse: { email: SPOUSE_EMAIL, first_name: 'Spouse', last_name: String(id) } } : {}),
        };
      }),
      { id: BEACON_ACCOUNT_ID, partner_id: 2, email: 'beacon.client@example.com', first_name: 'Beacon', last_name: 'Client' },
    ],
  };
}
