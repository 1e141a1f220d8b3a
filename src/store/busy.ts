/**
 * SQLite has one writer. A transaction that read and then writes fails at once ("database is
 * locked", SQLITE_BUSY) when another thread committed in between: the busy timeout cannot help,
 * the transaction's snapshot is stale. Such a transaction is simply run again. PostgreSQL never
 * answers this; anything else is thrown as it is.
 */
const BUSY = /SQLITE_BUSY|database is locked/i;

export function isBusy(err: unknown): boolean {
  return err instanceof Error && (BUSY.test(err.message) || BUSY.test(String((err as { code?: unknown }).code ?? '')));
}

/**
 * Runs `fn` again while SQLite answers busy: at once, then after 10 ms doubling to 500 ms, for
 * about four seconds in all. Every thread of a node writes the one file (configuration, schedules,
 * the audit trail), and a writer descheduled on a loaded machine can hold the lock for a while;
 * a few tries within 100 ms were not enough there.
 */
export async function retryBusy<T>(fn: () => Promise<T>, attempts = 12): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isBusy(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, 10 * 2 ** (attempt - 1))));
    }
  }
}
