import type { Filter } from 'mongodb';

/** A document's place in a newest-first listing: its creation time, ties broken by `_id`. */
export interface PagePlace {
  _id: string;
  createdAt: Date;
}

/** Newest first, ties by `_id` descending: a total order, so pages never repeat or skip a document. */
export const newestFirst = { createdAt: -1, _id: -1 } as const;

/** Oldest first, ties by `_id` ascending: the reverse of `newestFirst`. */
export const oldestFirst = { createdAt: 1, _id: 1 } as const;

/** The documents listed after `place` in `newestFirst` order (or in `oldestFirst`): the next page. */
export function listedAfter<T extends PagePlace>(
  place: PagePlace,
  order: typeof newestFirst | typeof oldestFirst = newestFirst,
): Filter<T> {
  const beyond = order === newestFirst ? '$lt' : '$gt';
  return {
    $or: [
      { createdAt: { [beyond]: place.createdAt } },
      { createdAt: place.createdAt, _id: { [beyond]: place._id } },
    ],
  };
}

/** The `newestFirst` order in memory: negative when `a` is listed before `b`. */
export function newestFirstOrder(a: PagePlace, b: PagePlace): number {
  return b.createdAt.getTime() - a.createdAt.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
}

/**
 * A page of at most `limit` documents and whether more follow, from a read of `limit + 1`: `read` is given
 * that count.
 */
export async function pageOf<T>(
  limit: number,
  read: (count: number) => Promise<T[]>,
): Promise<{ docs: T[]; hasMore: boolean }> {
  const docs = await read(limit + 1);
  return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
}
