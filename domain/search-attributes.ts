import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes.js';

/** Search attributes operators filter on in the Temporal UI; the worker registers them at start. */
export const searchAttributeKeys = {
  accountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
  recoveryState: defineSearchAttributeKey('RecoveryState', SearchAttributeType.KEYWORD),
  declineCode: defineSearchAttributeKey('DeclineCode', SearchAttributeType.KEYWORD),
  nextAttemptAt: defineSearchAttributeKey('NextAttemptAt', SearchAttributeType.DATETIME),
  eventType: defineSearchAttributeKey('EventType', SearchAttributeType.KEYWORD),
};

/** Every custom search attribute Recoup uses: a namespace must have them all before a workflow starts. */
export const allSearchAttributeKeys: ReadonlyArray<SearchAttributeKey<SearchAttributeType>> =
  Object.values(searchAttributeKeys);

/** A type as Temporal's CLI spells it (`KEYWORD_LIST` → `KeywordList`), for `--type` and `--search-attribute`. */
export function cliTypeName(type: SearchAttributeType): string {
  return type
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}
