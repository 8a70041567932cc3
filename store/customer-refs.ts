/** What identifies one customer in stored records, for export and erasure (each list may be empty). */
export interface CustomerRefs {
  emails: string[];
  /** Payment-method tokens: those charged, offered as fallbacks or saved through a card-update link. */
  tokens: string[];
  /** Both forms of their recoveries' ids (UUID and FAILED_API_<uuid>). */
  transactionIds: string[];
  /** The merchant's or the billing platform's id of the customer. */
  customerIds: string[];
}
