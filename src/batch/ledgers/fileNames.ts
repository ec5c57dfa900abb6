/**
 * Each job kind's ledger file in the user's data directory: one file (and one lock) per kind, so
 * that a docs sync never waits for a login-link renewal. Plain names, for `--help` at start-up.
 */
export const LOGIN_LINKS_FILE_NAME = 'login-links.ndjson';
export const ACCOUNTS_FILE_NAME = 'accounts.ndjson';
export const DOCUMENTS_FILE_NAME = 'documents.ndjson';
