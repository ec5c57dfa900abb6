import { DOCUMENT_MEDIA_TYPES, multilineText, oneOf, text } from '../contract';

/**
 * Field rules of records that only the mock creates: a seed fixture (`fixture.ts`) and the
 * `/_mock` controls (`controls/records.ts`) both write them, and must agree. The contract only
 * shows these fields in answers, so it sets no limits of its own (docs/contract-notes.md).
 */

export const TITLE_MAX_CHARACTERS = 200;
export const SUMMARY_MAX_CHARACTERS = 5000;
export const ITEM_DESCRIPTION_MAX_CHARACTERS = 500;
/** How long a deliverable's view link stays valid, in hours. */
export const VIEW_LINK_HOURS = { min: 1, max: 8760, default: 72 } as const;
export const VIEW_LINK_HOURS_RULE = `an integer from ${VIEW_LINK_HOURS.min} to ${VIEW_LINK_HOURS.max} (hours)`;
/** The media type of a document whose type is not given. */
export const DEFAULT_FILE_TYPE = 'text/plain';

/** Text of at most `maxCharacters` with something other than white space in it. */
export const nonBlank = (maxCharacters: number) => text(maxCharacters).refine((value) => value.trim().length > 0, 'must not be blank');

/** The fields both writers check alike (the fixture reads numbers as JSON numbers only, so view-link hours stay apart). */
export const recordFields = {
  itemDescription: nonBlank(ITEM_DESCRIPTION_MAX_CHARACTERS),
  deliverableTitle: nonBlank(TITLE_MAX_CHARACTERS),
  deliverableSummary: multilineText(SUMMARY_MAX_CHARACTERS),
  fileType: oneOf(DOCUMENT_MEDIA_TYPES).default(DEFAULT_FILE_TYPE),
};
