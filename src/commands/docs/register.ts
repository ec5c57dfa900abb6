import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export function registerDocs(program: Command, dispatch: Dispatch): void {
  const docs = program.command('docs').description("Upload, list and read an account's tax documents");

  docs
    .command('upload')
    .description('Upload one or more files to an account (all are checked before the first is sent)')
    .argument('<account-id>', 'account identifier')
    .argument('<file...>', 'files to upload')
    .option('--tax-year <year>', 'tax year the documents belong to (required)')
    .option('--description <text>', 'free text stored with every uploaded document')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep docs upload 1001 w2.pdf --tax-year 2024
  $ taxprep docs upload 1001 w2.pdf 1099-int.pdf --tax-year 2024 --description "Forms from the bank"
  $ taxprep docs upload 1001 scans/*.png --tax-year 2024 --json | jq '.[].id'
`,
    )
    .action(commandAction(dispatch, () => import('./upload')));

  docs
    .command('list')
    .description("List an account's documents, a page at a time or all of them")
    .argument('<account-id>', 'account identifier')
    .option('--tax-year <year>', 'only documents of this tax year')
    .option('--limit <n>', 'page size, 1-100 (default 50; with --all, the size of each page fetched)')
    .option('--offset <n>', 'number of documents to skip')
    .option('--all', 'follow pages to the end')
    .option('--max-pages <n>', 'with --all, fail (exit 12) rather than fetch more than this many pages (default 1000)')
    .option('--ndjson', 'one JSON document per line, printed as pages arrive')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep docs list 1001 --tax-year 2024
  $ taxprep docs list 1001 --all --json | jq '.total_count'
  $ taxprep docs list 1001 --all --ndjson | jq -r '.filename'
`,
    )
    .action(commandAction(dispatch, () => import('./list')));

  docs
    .command('get')
    .description('Show one document')
    .argument('<document-id>', 'document identifier')
    .addHelpText('after', '\nExamples:\n  $ taxprep docs get 7001\n  $ taxprep docs get 7001 --json | jq .file_size\n')
    .action(commandAction(dispatch, () => import('./get')));
}
