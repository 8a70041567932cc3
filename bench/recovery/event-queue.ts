/**
 * A min-heap of timed events; events at the same time run by rank (default 0), then in the order they were
 * scheduled.
 */
export class EventQueue<T> {
  private heap: Array<{ at: number; rank: number; seq: number; item: T }> = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, item: T, rank = 0): void {
    const h = this.heap;
    h.push({ at, rank, seq: (this.seq += 1), item });
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  /** The earliest event, removed; undefined when empty. */
  pop(): { at: number; item: T } | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined) return undefined;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return { at: top.at, item: top.item };
  }
}

type Keyed = { at: number; rank: number; seq: number };

function before(a: Keyed, b: Keyed): boolean {
  return a.at < b.at || (a.at === b.at && (a.rank < b.rank || (a.rank === b.rank && a.seq < b.seq)));
}
