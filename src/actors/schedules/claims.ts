/**
 * Taking due turns, on the hot path of a crowded minute, in plain SQL: one query reads a batch of
 * due turns (only the columns a call needs) and one conditional UPDATE takes them. A row is taken
 * only if its version is still the one read and nothing is in flight, so among nodes racing for a
 * turn exactly one wins it; `returning id` says which. On PostgreSQL both run in one transaction
 * and the read skips rows another node has locked (`FOR UPDATE SKIP LOCKED`), so the nodes of a
 * cluster take different turns instead of queueing on the same ones.
 */
import type { Store } from '../../store/orm.ts';
import { selectRows } from '../../store/rows.ts';

/** A due turn as read: what deciding and making the call need. */
export interface DueRow {
  readonly id: string;
  readonly version: number;
  readonly routeId: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: { value: unknown } | null;
  readonly contentType: string | null;
  readonly roles: string[];
  readonly organisation: string | null;
  readonly timeoutMs: number;
  readonly tokenId: string | null;
  readonly catchUpS: number;
  readonly nextRunAt: number;
  readonly runRequest: { at: number; replayOf: string | null; by: string } | null;
  readonly pendingTurn: Record<string, unknown> | null;
}

export interface Take {
  readonly id: string;
  /** The version read with the due turn. */
  readonly version: number;
  /** The new `in_flight` value. */
  readonly flight: unknown;
}

type Execute = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** JSON columns come back parsed from PostgreSQL and as text from SQLite; bigints as text from PostgreSQL. */
export const json = <T>(v: unknown): T | null => (v == null ? null : (typeof v === 'string' ? JSON.parse(v) : v) as T);
const int = (v: unknown): number => Number(v);

function dueRow(r: Record<string, unknown>): DueRow {
  return {
    id: String(r.id), version: int(r.version), routeId: String(r.route_id), method: String(r.method), path: String(r.path),
    headers: json<Record<string, string>>(r.headers) ?? {}, body: json<{ value: unknown }>(r.body),
    contentType: r.content_type == null ? null : String(r.content_type), roles: json<string[]>(r.roles) ?? [],
    organisation: r.organisation == null ? null : String(r.organisation), timeoutMs: int(r.timeout_ms),
    tokenId: r.token_id == null ? null : String(r.token_id), catchUpS: int(r.catch_up_s),
    nextRunAt: int(r.next_run_at), runRequest: json(r.run_request), pendingTurn: json(r.pending_turn),
  };
}

/**
 * Reads up to `limit` due turns of `buckets` (null: all), lets `decide` say which to take, and
 * takes them. Returns the rows read and the ids this node won.
 */
export async function takeDueTurns(
  store: Store,
  o: { readonly buckets: readonly number[] | null; readonly now: number; readonly limit: number; readonly leaseUntil: number },
  decide: (rows: readonly DueRow[]) => Take[],
): Promise<{ rows: DueRow[]; won: Set<string> }> {
  const pg = store.driver === 'postgresql';
  const mine = bucketFilter(o.buckets);
  const select = `select id, version, route_id, method, path, headers, body, content_type, roles, organisation, timeout_ms, token_id,
    catch_up_s, next_run_at, run_request, pending_turn from schedules
    where paused = false and finished = false and stopped is null and in_flight is null and next_run_at <= ?${mine}
    order by next_run_at limit ${Math.trunc(o.limit)}${pg ? ' for update skip locked' : ''}`;
  const run = async (execute: Execute) => {
    const rows = (await execute(select, [o.now])).map(dueRow);
    const won = await claim(execute, pg, decide(rows), o.leaseUntil, o.now);
    return { rows, won };
  };
  if (!pg) {
    const conn = store.em().getConnection();
    return run((sql, params) => conn.execute(sql, params, 'all') as Promise<Array<Record<string, unknown>>>);
  }
  return store.em().transactional((tx) => {
    const conn = tx.getConnection();
    const ctx = tx.getTransactionContext();
    return run((sql, params) => conn.execute(sql, params, 'all', ctx) as Promise<Array<Record<string, unknown>>>);
  });
}

async function claim(execute: Execute, pg: boolean, takes: readonly Take[], leaseUntil: number, now: number): Promise<Set<string>> {
  if (takes.length === 0) return new Set();
  // PostgreSQL types a bare parameter as text; the column is jsonb. SQLite keeps JSON as text.
  const asJson = pg ? 'cast(? as jsonb)' : '?';
  const sql = `update schedules set version = version + 1, in_flight = case id ${takes.map(() => `when ? then ${asJson}`).join(' ')} end,
    lease_until = ?, run_request = null, pending_turn = null, next_run_at = null, updated_at = ?
    where in_flight is null and (${takes.map(() => '(id = ? and version = ?)').join(' or ')}) returning id`;
  const params: unknown[] = [];
  for (const t of takes) params.push(t.id, JSON.stringify(t.flight));
  params.push(leaseUntil, now);
  for (const t of takes) params.push(t.id, t.version);
  return new Set((await execute(sql, params)).map((r) => String(r.id)));
}

/** ` and bucket in (…)` for an actor's buckets; empty when it owns them all. */
function bucketFilter(buckets: readonly number[] | null): string {
  return buckets ? ` and bucket in (${buckets.map((b) => Math.trunc(b)).join(',')})` : '';
}

const rowsOf = (store: Store, sql: string, params: unknown[]) => selectRows(store.em(), sql, params);

/** The earliest owed turn and the earliest lease end of these buckets, epoch ms (one round trip). */
export async function nextWake(store: Store, buckets: readonly number[] | null): Promise<{ turn: number | null; lease: number | null }> {
  const mine = bucketFilter(buckets);
  const [row] = await rowsOf(store, `select
    (select next_run_at from schedules where paused = false and finished = false and stopped is null and in_flight is null and next_run_at is not null${mine} order by next_run_at limit 1) as turn,
    (select lease_until from schedules where lease_until is not null${mine} order by lease_until limit 1) as lease`, []);
  return { turn: row?.turn == null ? null : int(row.turn), lease: row?.lease == null ? null : int(row.lease) };
}

/** Schedules of these buckets whose call's lease has ended. */
export async function endedLeases(store: Store, buckets: readonly number[] | null, now: number, limit: number): Promise<string[]> {
  const rows = await rowsOf(store, `select id from schedules where lease_until <= ?${bucketFilter(buckets)} order by lease_until limit ${Math.trunc(limit)}`, [now]);
  return rows.map((r) => String(r.id));
}
