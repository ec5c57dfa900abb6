import { DOCUMENT_EXTENSIONS, DOCUMENT_MAX_BYTES } from '../../contract/uploads';
import { DESCRIPTION_MAX_CHARACTERS, TAX_YEAR } from '../../contract/vocabulary';
import { pageFlags } from '../pageFlags';
import type { CommandSpec, FlagSpec } from '../spec';

const ACCOUNT_ID = { name: '<account-id>', help: 'account identifier' };
const LIST_ITEM_FIELDS = ['id', 'filename', 'tax_year', 'description', 'uploaded_at'] as const;
const DOCUMENT_FIELDS = [...LIST_ITEM_FIELDS, 'account_id', 'file_size', 'file_type'] as const;
const TAX_YEAR_FLAG: FlagSpec = { flag: '--tax-year <year>', field: 'tax_year', help: 'tax year the documents belong to (required)', range: TAX_YEAR };

export const uploadDocuments: CommandSpec = {
  name: 'upload',
  description: 'Upload one or more files to an account (all are checked before the first is sent)',
  arguments: [ACCOUNT_ID, { name: '<file...>', help: 'files to upload', complete: 'files' }],
  flags: [
    TAX_YEAR_FLAG,
    { flag: '--description <text>', field: 'description', help: 'free text stored with every uploaded document', maxCharacters: DESCRIPTION_MAX_CHARACTERS },
    { flag: '--allow-duplicate', help: 'upload even a file whose name the account already has for that tax year' },
  ],
  examples: [
    'taxprep docs upload 1001 w2.pdf --tax-year 2024',
    'taxprep docs upload 1001 w2.pdf 1099-int.pdf --tax-year 2024 --description "Forms from the bank"',
    "taxprep docs upload 1001 scans/*.png --tax-year 2024 --json | jq '.[].id'",
  ],
  notes: `Every file is checked before the first byte is sent: it exists, is readable, is one of the types the service takes (${DOCUMENT_EXTENSIONS.join(' ')}) and at most ${DOCUMENT_MAX_BYTES / 1024 / 1024} MiB, and the account has no document of that name for the tax year (--allow-duplicate uploads it anyway). If any file fails, nothing is uploaded.`,
  jsonFields: DOCUMENT_FIELDS,
  load: () => import('./upload'),
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
  load: () => import('./list'),
};

export const docs: CommandSpec = {
  name: 'docs',
  description: "Upload, list and read an account's tax documents",
  subcommands: [
    uploadDocuments,
    listDocuments,
    {
      name: 'get',
      description: 'Show one document',
      arguments: [{ name: '<document-id>', help: 'document identifier' }],
      examples: ['taxprep docs get 7001', 'taxprep docs get 7001 --json | jq .file_size'],
      jsonFields: DOCUMENT_FIELDS,
      load: () => import('./get'),
    },
  ],
};
