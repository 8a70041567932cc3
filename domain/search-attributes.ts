import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes operators filter on in the Temporal UI; registered when a server starts. */
export const searchAttributeKeys = {
  accountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
  recoveryState: defineSearchAttributeKey('RecoveryState', SearchAttributeType.KEYWORD),
  declineCode: defineSearchAttributeKey('DeclineCode', SearchAttributeType.KEYWORD),
  nextAttemptAt: defineSearchAttributeKey('NextAttemptAt', SearchAttributeType.DATETIME),
  eventType: defineSearchAttributeKey('EventType', SearchAttributeType.KEYWORD),
};
