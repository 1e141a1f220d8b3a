/**
 * Writing call outcomes, the other hot path of a crowded minute, in plain SQL: one read of the
 * schedules answered (their cadence and state, not their payload), one UPDATE of the columns an
 * outcome changes, one INSERT of the history rows, in one transaction. On PostgreSQL the rows are
 * locked in id order (`FOR UPDATE`), so a node never writes over another node's change. Through
 * the ORM the same write cost about 0.28 ms an outcome (bench/RESULTS.md).
 */
import type { Store } from '../../store/orm.ts';
import type { Schedule } from '../../store/entities.ts';
import { json } from './claims.ts';

/** What an outcome reads of a schedule; the change may set the fields in `WRITTEN`. */
export type OutcomeRow = Pick<Schedule,
  'id' | 'every' | 'cron' | 'at' | 'timezone' | 'catchUpS' | 'paused' | 'finished' | 'stopped' | 'nextRunAt' | 'inFlight' | 'leaseUntil'
  | 'lastRun' | 'deferrals' | 'pendingTurn' | 'runRequest' | 'version' | 'updatedAt'>;

type Execute = (sql: string, params: unknown[], method: 'all' | 'run') => Promise<unknown>;

const num = (v: unknown): number | null => (v == null ? null : Number(v));
const str = (v: unknown): string | null => (v == null ? null : String(v));

function outcomeRow(r: Record<string, unknown>): OutcomeRow {
  return {
    id: String(r.id), every: str(r.every), cron: str(r.cron), at: str(r.at), timezone: String(r.timezone),
    catchUpS: Number(r.catch_up_s), paused: Boolean(r.paused), finished: Boolean(r.finished), stopped: str(r.stopped), nextRunAt: num(r.next_run_at),
    inFlight: json(r.in_flight), leaseUntil: num(r.lease_until), lastRun: json(r.last_run), deferrals: Number(r.deferrals),
    pendingTurn: json(r.pending_turn), runRequest: json(r.run_request), version: Number(r.version), updatedAt: Number(r.updated_at),
  } as OutcomeRow;
}

/** The columns an outcome changes, with how PostgreSQL types each parameter. */
const WRITTEN = [
  ['finished', 'finished', 'boolean'],
  ['stopped', 'stopped', 'text'],
  ['nextRunAt', 'next_run_at', 'bigint'],
  ['inFlight', 'in_flight', 'jsonb'],
  ['leaseUntil', 'lease_until', 'bigint'],
  ['lastRun', 'last_run', 'jsonb'],
  ['deferrals', 'deferrals', 'integer'],
  ['pendingTurn', 'pending_turn', 'jsonb'],
  ['version', 'version', 'integer'],
  ['updatedAt', 'updated_at', 'bigint'],
] as const;

const RUN_COLUMNS = [
  ['id', 'id'], ['scheduleId', 'schedule_id'], ['runId', 'run_id'], ['attempt', 'attempt'], ['node', 'node'],
  ['scheduledFor', 'scheduled_for'], ['startedAt', 'started_at'], ['endedAt', 'ended_at'], ['state', 'state'],
  ['status', 'status'], ['detail', 'detail'], ['cause', 'cause'], ['ofRun', 'of_run'], ['attempts', 'attempts'],
] as const;

/** A history row (the `schedule_runs` table) as the engine builds it. */
export type RunRow = { readonly [K in (typeof RUN_COLUMNS)[number][0]]: unknown };

/** A parameter as the driver takes it: JSON as text (null stays SQL NULL), booleans as 0/1 on SQLite. */
function param(value: unknown, type: string, pg: boolean): unknown {
  if (value == null) return null;
  if (type === 'jsonb') return JSON.stringify(value);
  if (type === 'boolean' && !pg) return value ? 1 : 0;
  return value;
}

/**
 * Loads `ids`, lets `change` edit each row (null leaves it alone; it may add history rows), and
 * writes what changed, in one transaction. Returns what `change` returned for the rows it changed.
 */
export async function writeOutcomes<R>(
  store: Store,
  ids: readonly string[],
  now: number,
  change: (s: OutcomeRow, addRun: (row: RunRow) => void) => R | null,
): Promise<R[]> {
  const pg = store.driver === 'postgresql';
  const cast = (type: string) => (pg ? `cast(? as ${type})` : '?');
  return store.em().transactional(async (tx) => {
    const conn = tx.getConnection();
    const ctx = tx.getTransactionContext();
    const execute: Execute = (sql, params, method) => conn.execute(sql, params, method, ctx);
    const rows = (await execute(`select id, every, cron, at, timezone, catch_up_s, paused, finished, stopped, next_run_at, in_flight, lease_until,
      last_run, deferrals, pending_turn, run_request, version, updated_at from schedules
      where id in (${ids.map(() => '?').join(',')}) order by id${pg ? ' for update' : ''}`, [...ids], 'all') as Array<Record<string, unknown>>).map(outcomeRow);
    const changed: OutcomeRow[] = [];
    const runs: RunRow[] = [];
    const results: R[] = [];
    for (const s of rows) {
      const result = change(s, (row) => runs.push(row));
      if (result === null) continue;
      s.version += 1;
      s.updatedAt = now;
      changed.push(s);
      results.push(result);
    }
    if (changed.length > 0) {
      const params: unknown[] = [];
      const sets = WRITTEN.map(([field, column, type]) => {
        for (const s of changed) params.push(s.id, param(s[field], type, pg));
        return `${column} = case id ${changed.map(() => `when ? then ${cast(type)}`).join(' ')} end`;
      });
      for (const s of changed) params.push(s.id);
      await execute(`update schedules set ${sets.join(', ')} where id in (${changed.map(() => '?').join(',')})`, params, 'run');
    }
    if (runs.length > 0) {
      const params: unknown[] = [];
      const tuple = `(${RUN_COLUMNS.map(([field]) => (field === 'attempts' ? cast('jsonb') : '?')).join(', ')})`;
      for (const r of runs) for (const [field] of RUN_COLUMNS) params.push(param(r[field], field === 'attempts' ? 'jsonb' : '', pg));
      await execute(`insert into schedule_runs (${RUN_COLUMNS.map(([, column]) => column).join(', ')}) values ${runs.map(() => tuple).join(', ')}`, params, 'run');
    }
    return results;
  });
}

/**
 * Moves runs whose request has left into the `waiting` phase, only while they are still the run
 * in flight and still `calling` (an answer, a report or a hand-over may have come first). Returns
 * the schedule ids that moved.
 */
export async function markWaiting(store: Store, runs: ReadonlyArray<{ scheduleId: string; runId: string; attempt: number }>, now: number): Promise<string[]> {
  if (runs.length === 0) return [];
  const pg = store.driver === 'postgresql';
  const phase = pg ? `in_flight->>'phase'` : `json_extract(in_flight, '$.phase')`;
  const runId = pg ? `in_flight->>'runId'` : `json_extract(in_flight, '$.runId')`;
  const attempt = pg ? `(in_flight->>'attempt')::integer` : `json_extract(in_flight, '$.attempt')`;
  const set = pg ? `jsonb_set(in_flight, '{phase}', '"waiting"')` : `json_set(in_flight, '$.phase', 'waiting')`;
  const params: unknown[] = [now];
  for (const r of runs) params.push(r.scheduleId, r.runId, r.attempt);
  const rows = await store.em().getConnection().execute(
    `update schedules set in_flight = ${set}, version = version + 1, updated_at = ?
     where ${phase} = 'calling' and (${runs.map(() => `(id = ? and ${runId} = ? and ${attempt} = ?)`).join(' or ')}) returning id`,
    params, 'all',
  ) as Array<Record<string, unknown>>;
  return rows.map((r) => String(r.id));
}
