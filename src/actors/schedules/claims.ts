/**
 * Taking due turns: one conditional UPDATE for a whole batch. Each row is taken only if its
 * version is still the one read and nothing is in flight, so among nodes racing for the same turn
 * exactly one wins it; `returning id` says which turns this node won. One statement for up to 200
 * turns, where the ORM would build and send one statement (and a unit of work) per turn.
 */
import type { Store } from '../../store/orm.ts';

export interface Take {
  readonly id: string;
  /** The version read with the due turn. */
  readonly version: number;
  /** The new `in_flight` value. */
  readonly flight: unknown;
}

export async function claimTurns(store: Store, takes: readonly Take[], leaseUntil: number, now: number): Promise<Set<string>> {
  if (takes.length === 0) return new Set();
  // PostgreSQL types a bare parameter as text; the column is jsonb. SQLite keeps JSON as text.
  const json = store.driver === 'postgresql' ? 'cast(? as jsonb)' : '?';
  const sql = `update schedules set version = version + 1, in_flight = case id ${takes.map(() => `when ? then ${json}`).join(' ')} end,
    lease_until = ?, run_request = null, pending_turn = null, next_run_at = null, updated_at = ?
    where in_flight is null and (${takes.map(() => '(id = ? and version = ?)').join(' or ')}) returning id`;
  const params: unknown[] = [];
  for (const t of takes) params.push(t.id, JSON.stringify(t.flight));
  params.push(leaseUntil, now);
  for (const t of takes) params.push(t.id, t.version);
  const rows = (await store.em().getConnection().execute(sql, params, 'all')) as Array<{ id: string }>;
  return new Set(rows.map((r) => r.id));
}
