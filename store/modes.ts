import type { Filter } from 'mongodb';

/** A record made in the account's test mode carries `isSimulated: true`; one without the mark is live. */
interface Marked {
  isSimulated?: boolean;
}

/**
 * The records of one mode: the sandbox's (made in test mode) or the live ones, those stored before the mark
 * was kept included.
 */
export const inMode = <T extends Marked>(simulated: boolean): Filter<T> =>
  (simulated ? { isSimulated: true } : { isSimulated: { $ne: true } }) as Filter<T>;

/** Whether a record is of the mode given, as `inMode` selects them. */
export const isOfMode = (doc: Marked, simulated: boolean): boolean =>
  (doc.isSimulated === true) === simulated;
