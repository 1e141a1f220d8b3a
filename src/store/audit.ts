/**
 * The audit trail's rows (spec 1.3, migration 0009), in plain SQL: a batch of events goes in as
 * a few multi-row INSERTs in one transaction, pages come out newest first by id, and the
 * retention sweep deletes under the guard the append-only triggers let through. Every value is
 * a parameter; only placeholders and column names are written into the SQL.
 */
import { randomBytes } from 'node:crypto';
import type { Store } from './orm.ts';

export type AuditPart = 'changes' | 'security' | 'operations';

/** An event as stored (`at` in epoch ms). */
export interface AuditRow {
  readonly id: string;
  readonly at: number;
  readonly part: AuditPart;
  readonly action: string;
  readonly actorAccount: string | null;
  readonly actorToken: string | null;
  readonly targetKind: string;
  readonly targetId: string | null;
  readonly targetName: string | null;
  readonly organisation: string | null;
  readonly changes: unknown;
  readonly detail: string | null;
  readonly address: string | null;
  readonly node: string;
  readonly traceId: string | null;
  /** Operation events' extra fields (spec 2.6). */
  readonly attributes: unknown;
}

/** An event to write: the id is given when the caller needs it first, made here otherwise. */
export type NewAuditRow = Omit<AuditRow, 'id'> & { readonly id?: string };

const COLUMNS = [
  ['id', 'id'], ['at', 'at'], ['part', 'part'], ['action', 'action'], ['actorAccount', 'actor_account'],
  ['actorToken', 'actor_token'], ['targetKind', 'target_kind'], ['targetId', 'target_id'], ['targetName', 'target_name'],
  ['organisation', 'organisation'], ['changes', 'changes'], ['detail', 'detail'], ['address', 'address'], ['node', 'node'],
  ['traceId', 'trace_id'], ['attributes', 'attributes'],
] as const satisfies ReadonlyArray<readonly [keyof AuditRow, string]>;
const JSON_FIELDS = new Set<string>(['changes', 'attributes']);

/** Rows per INSERT: 16 parameters each stays far below SQLite's 32,766 and PostgreSQL's 65,535. */
const INSERT_CHUNK = 500;

let lastMs = 0;
let sequence = 0;

/**
 * Ids sort in write order: the millisecond (never going back within a process, even if the wall
 * clock does), a counter within it, then randomness so that nodes writing in the same
 * millisecond never collide (`aud-` + 11 + 4 + 12 hex).
 */
export function auditId(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (++sequence > 0xffff) {
    lastMs += 1;
    sequence = 0;
  }
  return `aud-${lastMs.toString(16).padStart(11, '0').slice(-11)}${sequence.toString(16).padStart(4, '0')}${randomBytes(6).toString('hex')}`;
}

type Execute = (sql: string, params: unknown[], method: 'all' | 'run') => Promise<unknown>;

/** Runs `fn` in one transaction, with the statements bound to it. */
function inTransaction<T>(store: Store, fn: (execute: Execute) => Promise<T>): Promise<T> {
  return store.em().transactional((tx) => {
    const conn = tx.getConnection();
    const ctx = tx.getTransactionContext();
    return fn((sql, params, method) => conn.execute(sql, params, method, ctx));
  });
}

/** Writes the events in one transaction; returns their ids in order. */
export async function insertEvents(store: Store, rows: readonly NewAuditRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const pg = store.driver === 'postgresql';
  const full = rows.map((r) => ({ ...r, id: r.id ?? auditId() }));
  const tuple = `(${COLUMNS.map(([field]) => (pg && JSON_FIELDS.has(field) ? 'cast(? as jsonb)' : '?')).join(', ')})`;
  const names = COLUMNS.map(([, column]) => column).join(', ');
  await inTransaction(store, async (execute) => {
    for (let i = 0; i < full.length; i += INSERT_CHUNK) {
      const chunk = full.slice(i, i + INSERT_CHUNK);
      const params: unknown[] = [];
      for (const r of chunk) {
        for (const [field] of COLUMNS) {
          const v = r[field];
          params.push(v == null ? null : JSON_FIELDS.has(field) ? JSON.stringify(v) : v);
        }
      }
      await execute(`insert into audit_events (${names}) values ${chunk.map(() => tuple).join(', ')}`, params, 'run');
    }
  });
  return full.map((r) => r.id);
}

export interface AuditQuery {
  readonly parts?: readonly AuditPart[];
  readonly actions?: readonly string[];
  /** The acting account, with or without a token. */
  readonly actor?: string;
  readonly targetId?: string;
  readonly targetKind?: string;
  readonly notTargetKind?: string;
  /** The caller's perimeter: kinds it may read (an empty list reads nothing). */
  readonly allowedTargetKinds?: readonly string[];
  /** The caller's perimeter: organisations it may read (an empty list reads nothing). */
  readonly organisations?: readonly string[];
  /** Epoch ms, both inclusive. */
  readonly from?: number;
  readonly to?: number;
  /** Searched case-insensitively, as typed, in detail, address, target name and action. */
  readonly text?: string;
  /** The last id of the page before: the next page holds older events. */
  readonly afterId?: string;
  readonly limit: number;
}

const TEXT_COLUMNS = ['detail', 'address', 'target_name', 'action'];

/** `%`, `_` and the escape itself match only themselves. */
const likePattern = (text: string): string => `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;

/**
 * One page, newest first, with one row more than `limit` when more remain. The filters are all
 * ANDed: the perimeter lists narrow whatever the caller asked for.
 */
export async function queryEvents(store: Store, q: AuditQuery): Promise<AuditRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const among = (column: string, values: readonly string[]) => {
    if (values.length === 0) where.push('1 = 0');
    else {
      where.push(`${column} in (${values.map(() => '?').join(', ')})`);
      params.push(...values);
    }
  };
  const equal = (column: string, op: string, value: unknown) => {
    where.push(`${column} ${op} ?`);
    params.push(value);
  };
  if (q.parts) among('part', q.parts);
  if (q.actions) among('action', q.actions);
  if (q.actor !== undefined) equal('actor_account', '=', q.actor);
  if (q.targetId !== undefined) equal('target_id', '=', q.targetId);
  if (q.targetKind !== undefined) equal('target_kind', '=', q.targetKind);
  if (q.notTargetKind !== undefined) equal('target_kind', '<>', q.notTargetKind);
  if (q.allowedTargetKinds) among('target_kind', q.allowedTargetKinds);
  if (q.organisations) among('organisation', q.organisations);
  if (q.from !== undefined) equal('at', '>=', q.from);
  if (q.to !== undefined) equal('at', '<=', q.to);
  if (q.text) {
    const pattern = likePattern(q.text);
    where.push(`(${TEXT_COLUMNS.map((c) => `lower(${c}) like ? escape '!'`).join(' or ')})`);
    for (const _ of TEXT_COLUMNS) params.push(pattern);
  }
  if (q.afterId !== undefined) equal('id', '<', q.afterId);
  const limit = (Number.isFinite(q.limit) ? Math.max(1, Math.trunc(q.limit)) : 1) + 1;
  params.push(limit);
  const sql = `select ${COLUMNS.map(([, column]) => column).join(', ')} from audit_events
    ${where.length > 0 ? `where ${where.join(' and ')}` : ''} order by id desc limit ?`;
  const rows = await store.em().getConnection().execute(sql, params, 'all') as Array<Record<string, unknown>>;
  return rows.map(auditRow);
}

const str = (v: unknown): string | null => (v == null ? null : String(v));
/** JSON comes back parsed from PostgreSQL and as text from SQLite. */
const json = (v: unknown): unknown => (v == null ? null : typeof v === 'string' ? JSON.parse(v) : v);

function auditRow(r: Record<string, unknown>): AuditRow {
  return {
    id: String(r.id), at: Number(r.at), part: String(r.part) as AuditPart, action: String(r.action),
    actorAccount: str(r.actor_account), actorToken: str(r.actor_token), targetKind: String(r.target_kind),
    targetId: str(r.target_id), targetName: str(r.target_name), organisation: str(r.organisation),
    changes: json(r.changes), detail: str(r.detail), address: str(r.address), node: String(r.node),
    traceId: str(r.trace_id), attributes: json(r.attributes),
  };
}

/** Per part, events strictly older than this epoch ms go. */
export interface SweepLines {
  readonly changesBefore: number;
  readonly securityBefore: number;
  readonly operationsBefore: number;
}

export type SweepCounts = Record<AuditPart, number>;

/** Rows deleted per transaction: SQLite's one write lock is held briefly and often released. */
const SWEEP_CHUNK = 1000;

/**
 * Deletes what is past each part's line, a bounded chunk per transaction, each under the guard
 * the triggers let through (see migration 0009). A chunk that fails rolls back whole, guard
 * included; chunks committed before it stay deleted, and the next sweep goes on from there.
 */
export async function sweepEvents(store: Store, lines: SweepLines, o: { chunk?: number } = {}): Promise<SweepCounts> {
  const pg = store.driver === 'postgresql';
  const chunk = Math.max(1, Math.trunc(o.chunk ?? SWEEP_CHUNK));
  const counts: SweepCounts = { changes: 0, security: 0, operations: 0 };
  const plan: Array<[AuditPart, number]> = [['changes', lines.changesBefore], ['security', lines.securityBefore], ['operations', lines.operationsBefore]];
  for (const [part, before] of plan) {
    for (;;) {
      const deleted = await inTransaction(store, async (execute) => {
        if (pg) await execute(`select set_config('meerkat.audit_sweep', 'on', true)`, [], 'all');
        else await execute('insert into audit_sweep_guard (sweeping) values (1)', [], 'run');
        const result = await execute(`delete from audit_events where id in
          (select id from audit_events where part = ? and at < ? order by id limit ?)`, [part, before, chunk], 'run');
        // SQLite: the row goes before the commit, so it is never seen outside this transaction.
        if (!pg) await execute('delete from audit_sweep_guard', [], 'run');
        return Number((result as { affectedRows?: number }).affectedRows ?? 0);
      });
      counts[part] += deleted;
      if (deleted < chunk) break;
    }
  }
  return counts;
}
