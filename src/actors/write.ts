import type { EntityManager } from '@mikro-orm/core';
import { lockConfiguration, type Store } from '../store/orm.ts';
import { Change } from '../store/entities.ts';
import { retryBusy } from '../store/busy.ts';
import { insertEventsIn, type AuditRow } from '../store/audit.ts';
import type { Caller } from '../workers/protocol.ts';
import { AuditNotes, linesOf } from '../core/audit/lines.ts';

/** What the write handlers of an actor that owns configuration tables share (config, certs). */
export interface WriteDeps {
  readonly store: Store;
  readonly masterKey: Buffer;
  /** This node's name, written on its audit lines. */
  readonly node: string;
  now(): number;
  /** Who asked for the call being handled (carried on the call), or null: the gateway itself. */
  caller(): Caller | null;
  /** Reloads the snapshot and pushes it to the main thread (before the call's reply). */
  publish(): Promise<void>;
  /** Hands lines written in a committed transaction on (to the collector push). */
  written(rows: readonly AuditRow[]): void;
  /** Waits until the other nodes serve change `id` (actors/node-serving.ts; absent, nothing to wait for). */
  served?(id: number): Promise<void>;
}

/**
 * One configuration write: its rows, the change row that tells every node, and the audit lines
 * of what moved, in one transaction (a refusal thrown inside leaves nothing, line included), then
 * the fresh snapshot, then (in a cluster) the other nodes serving it. A write that returns `false`
 * changed nothing, so it neither records a change nor republishes. The lines are stamped here
 * with the caller, never by the handlers.
 */
export async function write<T>(deps: WriteDeps, kind: string, fn: (em: EntityManager, audit: AuditNotes) => Promise<T>): Promise<T> {
  let lines: AuditRow[] = [];
  let change: Change | undefined;
  const result = await retryBusy(() => deps.store.em().transactional(async (em) => {
    await lockConfiguration(em, deps.store.driver);
    const audit = new AuditNotes();
    const out = await fn(em, audit);
    // `false` is a write that found nothing to change (an unknown id): no node needs to reload.
    change = out === false ? undefined : em.create(Change, { kind, at: deps.now() });
    await em.flush();
    lines = await insertEventsIn(em, deps.store.driver, linesOf(audit.notes, deps.caller(), deps.now(), deps.node));
    return out;
  }));
  if (result !== false) await deps.publish();
  // Answered once every node serves it: a token revoked is refused by every node from the answer on.
  if (change !== undefined) await deps.served?.(change.id);
  if (lines.length > 0) deps.written(lines);
  return result;
}
