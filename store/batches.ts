/** How many documents a batch of ids read or written together holds. */
export const batchSize = 500;

/**
 * The documents of a cursor (or any async iterable) in batches of `size`, so that a look-up by their ids
 * (`{ _id: { $in: ids } }`) is one query per batch and never one over a whole collection.
 */
export async function* inBatches<T>(items: AsyncIterable<T>, size = batchSize): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
