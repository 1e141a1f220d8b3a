import type { EntityManager } from '@mikro-orm/core';
import type { Store } from '../../../store/orm.ts';
import { Change } from '../../../store/entities.ts';

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
 * transaction (a refusal thrown inside leaves nothing), then the fresh snapshot.
 */
export async function write<T>(deps: WriteDeps, kind: string, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  const result = await deps.store.em().transactional(async (em) => {
    const out = await fn(em);
    em.create(Change, { kind, at: deps.now() });
    return out;
  });
  await deps.publish();
  return result;
}
