import type { EntityManager } from '@mikro-orm/core';
import type { Store } from '../../../store/orm.ts';
import { Change } from '../../../store/entities.ts';
import { retryBusy } from '../../../store/busy.ts';

/** What the write handlers share inside the config actor. */
export interface WriteDeps {
  readonly store: Store;
  readonly masterKey: Buffer;
  now(): number;
  /** Reloads the snapshot and pushes it to the main thread (before the call's reply). */
  publish(): Promise<void>;
}

/**
 * One configuration write: its rows and the change row that tells every node, in one
 * transaction (a refusal thrown inside leaves nothing), then the fresh snapshot. A write that
 * returns `false` changed nothing, so it neither records a change nor republishes.
 */
export async function write<T>(deps: WriteDeps, kind: string, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  const result = await retryBusy(() => deps.store.em().transactional(async (em) => {
    const out = await fn(em);
    // `false` is a write that found nothing to change (an unknown id): no node needs to reload.
    if (out !== false) em.create(Change, { kind, at: deps.now() });
    return out;
  }));
  if (result !== false) await deps.publish();
  return result;
}
