/**
 * Keyset paging: a page holds up to `limit` rows after a key, in the list's order, and says the
 * key to start the next page from when more remain. The cursor a client holds (http/cursor.ts)
 * is that key.
 */

export interface Page<T, K> {
  readonly items: T[];
  /** The key of the last item when more remain after it; null on the last page. */
  readonly next: K | null;
}

export interface FillOptions<R, K> {
  readonly limit: number;
  /** Where the page starts (exclusive); null for the first page. */
  readonly after: K | null;
  /** At most `count` rows strictly after `after`, in the list's order (null: from the start). */
  readonly read: (after: K | null, count: number) => Promise<readonly R[]>;
  readonly key: (row: R) => K;
  /**
   * A condition the database does not check: rows it drops are read and passed over, and reading
   * goes on until the page is full or the rows end.
   */
  readonly keep?: (row: R) => boolean;
  /** Rows read at once while `keep` drops some; at least limit + 1. */
  readonly batch?: number;
}

/**
 * Fills one page. It reads one row past the page to know whether more remain, so a last page
 * that is exactly full carries no next key, and a client never asks for an empty page.
 */
export async function fillPage<R, K>(o: FillOptions<R, K>): Promise<Page<R, K>> {
  const size = o.keep ? Math.max(o.limit + 1, o.batch ?? 200) : o.limit + 1;
  const items: R[] = [];
  let after = o.after;
  for (;;) {
    const rows = await o.read(after, size);
    for (const row of rows) {
      if (o.keep && !o.keep(row)) continue;
      if (items.length === o.limit) return { items, next: o.key(items[items.length - 1]!) };
      items.push(row);
    }
    const last = rows[rows.length - 1];
    if (rows.length < size || last === undefined) return { items, next: null };
    after = o.key(last);
  }
}
