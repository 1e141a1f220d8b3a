/**
 * Sign-in attempts in the database (migration 0016), the throttle's memory shared by every node.
 * Each call is one transaction holding the name's lock (an advisory lock on PostgreSQL, SQLite's
 * one writer otherwise), so two nodes never both spend a name's last failure.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { SigninAttemptRow } from '../../store/entities.ts';
import { retryBusy } from '../../store/busy.ts';
import type { Store } from '../../store/orm.ts';
import { nameKey, THROTTLE, trips, waitBefore, type Attempt, type AttemptState } from '../../core/sessions/throttle.ts';

async function underNameLock<T>(store: Store, key: string, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  return retryBusy(() => store.em().transactional(async (em) => {
    if (store.driver === 'postgresql') {
      await em.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`signin:${key}`], 'all', em.getTransactionContext());
    }
    return fn(em);
  }));
}

function asAttempt(r: SigninAttemptRow): Attempt {
  return { state: r.state as AttemptState, at: r.at, until: r.until ?? null };
}

/**
 * An attempt begins: refused (`wait` ms) while the name is locked or has no failure left to
 * spend; otherwise it holds its place (`attempt`) until `endAttempt`. Attempts that no longer
 * count, of any name, are removed on the way, so invented names do not pile up.
 */
export async function beginAttempt(store: Store, name: string, now: number): Promise<{ wait: number } | { attempt: string }> {
  const key = nameKey(name);
  return underNameLock(store, key, async (em) => {
    await em.nativeDelete(SigninAttemptRow, { $or: [{ state: { $ne: 'locked' }, at: { $lte: now - THROTTLE.windowMs } }, { state: 'locked', until: { $lte: now } }] });
    const rows = await em.find(SigninAttemptRow, { nameKey: key });
    const wait = waitBefore(rows.map(asAttempt), now);
    if (wait > 0) return { wait };
    const id = randomUUID();
    em.create(SigninAttemptRow, { id, nameKey: key, state: 'pending', at: now, until: null });
    await em.flush();
    return { attempt: id };
  });
}

/**
 * The attempt ended. A success clears the name's failures; a failure is kept, and the one that
 * brings the window's failures to the limit trips the lock (answers true, once).
 */
export async function endAttempt(store: Store, name: string, attempt: string, ok: boolean, now: number): Promise<boolean> {
  const key = nameKey(name);
  return underNameLock(store, key, async (em) => {
    if (ok) {
      await em.nativeDelete(SigninAttemptRow, { nameKey: key, state: { $ne: 'locked' } });
      return false;
    }
    await em.nativeUpdate(SigninAttemptRow, { id: attempt }, { state: 'failed' });
    const rows = (await em.find(SigninAttemptRow, { nameKey: key })).map(asAttempt);
    if (!trips(rows, now)) return false;
    // The failures are spent on the lock: after it, the name starts again with five.
    await em.nativeDelete(SigninAttemptRow, { nameKey: key, state: 'failed' });
    em.create(SigninAttemptRow, { id: randomUUID(), nameKey: key, state: 'locked', at: now, until: now + THROTTLE.lockMs });
    await em.flush();
    return true;
  });
}
