import { batchRunFlags } from '../../batch/flags';
import { DOCUMENTS_FILE_NAME } from '../../batch/ledgers/fileNames';
import { pageFlags } from '../pageFlags';
import type { CommandSpec, FlagSpec } from '../spec';
import { SERVICE_WITH_KEY, STATE } from '../exitCodes';

const ACCOUNT_ID = { name: '<account-id>', help: 'account identifier' };
const LIST_ITEM_FIELDS = ['id', 'filename', 'tax_year', 'description', 'uploaded_at'] as const;
const DOCUMENT_FIELDS = [...LIST_ITEM_FIELDS, 'account_id', 'file_size', 'file_type'] as const;
const TAX_YEAR_FLAG: FlagSpec = { flag: '--tax-year <year>', field: 'tax_year', help: 'tax year of the documents, such as 2025' };

export const uploadDocuments: CommandSpec = {
  name: 'upload',
  description: 'Upload one or more files to an account (all are checked before the first is sent)',
  arguments: [ACCOUNT_ID, { name: '<file...>', help: 'files to upload', complete: 'files' }],
  flags: [
    { ...TAX_YEAR_FLAG, required: true },
    { flag: '--description <text>', field: 'description', help: 'free text stored with every uploaded document' },
    { flag: '--allow-duplicate', help: 'upload even a file whose name the account already has for that tax year' },
  ],
  examples: [
    'taxprep docs upload 1001 w2.pdf --tax-year 2024',
    'taxprep docs upload 1001 *.pdf --tax-year 2024 --description "From the bank"',
    "taxprep docs upload 1001 scan.png --tax-year 2024 --json | jq '.[].id'",
  ],
  notes:
    'Every file is checked before the first byte is sent: it exists and is readable, and the account has no\n' +
    'document of that name for the tax year (--allow-duplicate uploads it anyway); if any file fails, nothing\n' +
    'is uploaded. The contract does not show the size limit or the file types the service takes: a file is\n' +
    "refused before sending only by a rule known for this profile and base URL (the service's own refusal,\n" +
    "remembered, or the profile's upload_max_size / upload_types); otherwise the service decides, and a file\n" +
    'it refuses is reported while the others go on (exit 9).\n' +
    'Requests: the duplicate check lists the account\'s documents of the year once (one request per 100 of\n' +
    'them) however many files, none with --allow-duplicate; then one upload per file, and a read of a\n' +
    'document whose answer lacks a field the table shows. --verbose shows each request.',
  jsonFields: DOCUMENT_FIELDS,
  exitCodes: [...SERVICE_WITH_KEY, 'NOT_FOUND', ['REJECTED', 'the one file given was refused (413, 415, VALIDATION_ERROR)'], ['PARTIAL', 'of several files, some were refused and the others uploaded'], 'INTERRUPTED'],
  load: () => import('./upload'),
};

export const syncDocuments: CommandSpec = {
  name: 'sync',
  description: 'Upload the files of a folder that the accounts do not have yet (re-run safely)',
  arguments: [{ name: '<dir>', help: 'folder laid out as <account-id>/<tax-year>/<file>, or holding the files a --manifest names', complete: 'files' }],
  flags: [
    { flag: '--manifest <file>', help: 'CSV or NDJSON with path (from <dir>), account_id, tax_year, and optional description, for any other layout', complete: 'files' },
    { flag: '--exclude <glob>', help: 'leave out files and folders matching: a name (*.tmp, drafts) or a path from <dir> (1001/2023)', repeatable: true },
    { flag: '--description <text>', field: 'description', help: 'free text stored with every uploaded document (a manifest row may give its own)' },
    { flag: '--upload-changed', help: 'upload a file whose name is on the account with other content than the ledger recorded (a second document)' },
    { flag: '--skip-invalid', help: 'upload the good files and report the ones that cannot be synced as failed, instead of sending nothing' },
    { flag: '--dry-run', help: 'print the plan (upload, skip or conflict, with the reason); send only the list requests it needs' },
    { flag: '--offline', help: 'with --dry-run: plan from the ledger alone, sending nothing at all' },
    ...batchRunFlags(DOCUMENTS_FILE_NAME),
  ],
  examples: [
    'taxprep docs sync /srv/shared/clients --dry-run',
    'taxprep docs sync /srv/shared/clients --exclude drafts --exclude "*.tmp"',
    'taxprep docs sync scans --manifest scans/manifest.csv --json >> sync.ndjson',
  ],
  notes:
    'A file counts as uploaded when the ledger recorded its content for the account and year, or the\n' +
    'account has a document of that name and year. A run killed at any moment resumes without storing a\n' +
    'file twice; only one run works on the ledger at a time (exit 10 when another holds it).',
  exitCodes: [...SERVICE_WITH_KEY, ...STATE, ['NOT_FOUND', "an account's document list answered 404 (no such account): nothing was uploaded"], ['PARTIAL', 'some files were not uploaded; each is reported'], 'LOCKED', 'INTERRUPTED'],
  load: () => import('./sync'),
};

export const listDocuments: CommandSpec = {
  name: 'list',
  description: "List an account's documents, a page at a time or all of them",
  arguments: [ACCOUNT_ID],
  flags: [{ ...TAX_YEAR_FLAG, help: 'only documents of this tax year' }, ...pageFlags('documents')],
  examples: [
    'taxprep docs list 1001 --tax-year 2024',
    "taxprep docs list 1001 --all --json | jq '.total_count'",
    "taxprep docs list 1001 --all --ndjson | jq -r '.filename'",
    "taxprep docs list 1001 --json id,filename | jq -r '.documents[].filename'",
  ],
  jsonFields: LIST_ITEM_FIELDS,
  exitCodes: [...SERVICE_WITH_KEY, 'NOT_FOUND'],
  load: () => import('./list'),
};

export const docs: CommandSpec = {
  name: 'docs',
  group: 'core',
  description: "Upload, sync, list and read an account's tax documents",
  subcommands: [
    uploadDocuments,
    syncDocuments,
    listDocuments,
    {
      name: 'get',
      description: 'Show one document',
      arguments: [{ name: '<document-id>', help: 'document identifier' }],
      examples: ['taxprep docs get 7001', 'taxprep docs get 7001 --json | jq .file_size'],
      jsonFields: DOCUMENT_FIELDS,
      exitCodes: [...SERVICE_WITH_KEY, 'NOT_FOUND'],
      load: () => import('./get'),
    },
  ],
};
