/**
 * SQLite has one writer. Transactions begin IMMEDIATE (store/orm.ts), so a writer waits for the
 * lock at BEGIN for the busy timeout and never works on a stale snapshot; "database is locked"
 * (SQLITE_BUSY) now means the timeout ran out under a long write elsewhere. Such a transaction is
 * run again a few times. PostgreSQL never answers this; anything else is thrown as it is.
 */
const BUSY = /SQLITE_BUSY|database is locked/i;

export function isBusy(err: unknown): boolean {
  return err instanceof Error && (BUSY.test(err.message) || BUSY.test(String((err as { code?: unknown }).code ?? '')));
}

export async function retryBusy<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isBusy(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt));
    }
  }
}
