/**
 * The audit trail's rows (spec 1.3, migration 0009), in plain SQL: a batch of events goes in as
 * a few multi-row INSERTs in one transaction, pages come out newest first by id, and the
 * retention sweep deletes under the guard the append-only triggers let through. No value is
 * written into the SQL here: the batcher's SQLite inserts bind them, and elsewhere the ORM's
 * formatter escapes the parameters it is given.
 */
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { Store } from './orm.ts';
import type { SweepLines } from './audit-retention.ts';
import { json, selectRows, str } from './rows.ts';

export type { SweepLines };

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
  /** The organisation a change took its object out of, when it moved it (migration 0019). */
  readonly organisationFrom?: string | null;
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

/** A line as a recorder hands it: the store adds the id, the writer the node. */
export type AuditEntry = Omit<NewAuditRow, 'id' | 'node'>;

const COLUMNS = [
  ['id', 'id'], ['at', 'at'], ['part', 'part'], ['action', 'action'], ['actorAccount', 'actor_account'],
  ['actorToken', 'actor_token'], ['targetKind', 'target_kind'], ['targetId', 'target_id'], ['targetName', 'target_name'],
  ['organisation', 'organisation'], ['organisationFrom', 'organisation_from'], ['changes', 'changes'], ['detail', 'detail'], ['address', 'address'], ['node', 'node'],
  ['traceId', 'trace_id'], ['attributes', 'attributes'],
] as const satisfies ReadonlyArray<readonly [keyof AuditRow, string]>;
const JSON_FIELDS = new Set<string>(['changes', 'attributes']);

/** Rows per INSERT: 17 parameters each stays far below SQLite's 32,766 and PostgreSQL's 65,535. */
const INSERT_CHUNK = 500;

let lastMs = 0;
let sequence = 0;

/**
 * Ids sort in write order: the millisecond (never going back within a process, even if the wall
 * clock does), a counter within it, then randomness so that nodes writing in the same
 * millisecond never collide (`aud-` + 11 + 4 + 12 hex).
 */
export function auditId(random: string = randomBytes(6).toString('hex')): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (++sequence > 0xffff) {
    lastMs += 1;
    sequence = 0;
  }
  return `aud-${lastMs.toString(16).padStart(11, '0').slice(-11)}${sequence.toString(16).padStart(4, '0')}${random}`;
}

/**
 * Ids for a batch: the randomness is drawn once for the batch, since within this process the
 * millisecond and the counter already tell its ids apart; it keeps another node's apart.
 */
export function auditIds(count: number): string[] {
  const random = randomBytes(6).toString('hex');
  return Array.from({ length: count }, () => auditId(random));
}

type Execute = (sql: string, params: unknown[], method: 'all' | 'run') => Promise<unknown>;

/** Runs `fn` in one transaction, with the statements bound to it. */
function inTransaction<T>(store: Store, fn: (execute: Execute) => Promise<T>): Promise<T> {
  return store.em().transactional((tx) => fn(bound(tx)));
}

function bound(em: EntityManager): Execute {
  const conn = em.getConnection();
  const ctx = em.getTransactionContext();
  return (sql, params, method) => conn.execute(sql, params, method, ctx);
}

/** Writes the events in one transaction; returns their ids in order. */
export async function insertEvents(store: Store, rows: readonly NewAuditRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  if (store.driver === 'sqlite') return insertSqlite(store, rows, rows.map((r) => r.id ?? auditId()), null);
  const written = await store.em().transactional((tx) => insertEventsIn(tx, store.driver, rows));
  return written.map((r) => r.id);
}

/**
 * The AuditBatcher's batches: lines as recorders hand them, all written by `node`, in one
 * transaction; returns their ids in order. No line is copied on the way.
 */
export async function insertLines(store: Store, lines: ReadonlyArray<AuditEntry & { readonly id?: string }>, node: string): Promise<string[]> {
  if (lines.length === 0) return [];
  if (store.driver === 'sqlite') {
    const fresh = auditIds(lines.length);
    return insertSqlite(store, lines, lines.map((l, i) => l.id ?? fresh[i]!), node);
  }
  const written = await store.em().transactional((tx) => insertEventsIn(tx, store.driver, lines.map((l) => ({ ...l, node }))));
  return written.map((r) => r.id);
}

/**
 * Which of these ids are stored already: a line told again after its actor crashed may have been
 * written before the crash, and an id is inserted once (the append-only triggers refuse a second).
 */
export async function storedIds(store: Store, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    const chunk = ids.slice(i, i + INSERT_CHUNK);
    const rows = await store.em().getConnection().execute<Array<{ id: string }>>(`select id from audit_events where id in (${chunk.map(() => '?').join(', ')})`, chunk, 'all');
    for (const r of rows) found.add(String(r.id));
  }
  return found;
}

/** The libsql connection as the pool hands it out: synchronous statements. */
interface RawSqlite {
  prepare(sql: string): { run(params: unknown[]): unknown };
  exec(sql: string): unknown;
}

interface KnexClient {
  acquireConnection(): Promise<RawSqlite>;
  releaseConnection(conn: RawSqlite): Promise<unknown>;
}

/** Prepared INSERTs of each row count, per connection (the pool replaces connections now and then). */
const statements = new WeakMap<RawSqlite, Map<number, { run(params: unknown[]): unknown }>>();

/**
 * SQLite, the AuditBatcher's batches: straight to the connection with cached prepared
 * statements and bound values. The ORM's `execute` writes every value into the SQL text and
 * prepares it anew, which cost the writer more than SQLite's own insert.
 */
async function insertSqlite(store: Store, rows: readonly AuditEntry[], ids: readonly string[], node: string | null): Promise<string[]> {
  const client = (store.em().getConnection() as unknown as { getKnex(): { client: KnexClient } }).getKnex().client;
  const conn = await client.acquireConnection();
  try {
    let cache = statements.get(conn);
    if (!cache) statements.set(conn, (cache = new Map()));
    conn.exec('BEGIN IMMEDIATE');
    try {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        const count = Math.min(INSERT_CHUNK, rows.length - i);
        let statement = cache.get(count);
        if (!statement) cache.set(count, (statement = conn.prepare(insertSql(count, false))));
        statement.run(paramsOf(rows, ids, i, count, node));
      }
      conn.exec('COMMIT');
    } catch (err) {
      try {
        conn.exec('ROLLBACK');
      } catch {
        // Nothing was begun, or it is gone already: the error that matters is the first.
      }
      throw err;
    }
    return [...ids];
  } finally {
    await client.releaseConnection(conn);
  }
}

const COLUMN_NAMES = COLUMNS.map(([, column]) => column).join(', ');

function insertSql(count: number, pg: boolean): string {
  const tuple = `(${COLUMNS.map(([field]) => (pg && JSON_FIELDS.has(field) ? 'cast(? as jsonb)' : '?')).join(', ')})`;
  return `insert into audit_events (${COLUMN_NAMES}) values ${Array.from({ length: count }, () => tuple).join(', ')}`;
}

function paramsOf(rows: readonly AuditEntry[], ids: readonly string[], from: number, count: number, node: string | null): unknown[] {
  const params: unknown[] = [];
  for (let i = from; i < from + count; i++) {
    const r = rows[i]! as AuditEntry & { node?: string };
    for (const [field] of COLUMNS) {
      const v = field === 'id' ? ids[i] : field === 'node' ? node ?? r.node : r[field];
      params.push(v == null ? null : JSON_FIELDS.has(field) ? JSON.stringify(v) : v);
    }
  }
  return params;
}

/**
 * Writes the events inside the caller's transaction (`em` is its transactional manager): a
 * change and its line commit together. Returns the rows as written, ids given.
 */
export async function insertEventsIn(em: EntityManager, driver: Store['driver'], rows: readonly NewAuditRow[]): Promise<AuditRow[]> {
  if (rows.length === 0) return [];
  const execute = bound(em);
  const full = rows.map((r): AuditRow => ({ ...r, id: r.id ?? auditId() }));
  const ids = full.map((r) => r.id);
  for (let i = 0; i < full.length; i += INSERT_CHUNK) {
    const count = Math.min(INSERT_CHUNK, full.length - i);
    await execute(insertSql(count, driver === 'postgresql'), paramsOf(full, ids, i, count, null), 'run');
  }
  return full;
}

/** One grant of the caller's perimeter: lines whose part, target kind and organisation all fit. */
export interface AuditGrantQuery {
  readonly parts: readonly string[];
  readonly targetKinds: readonly string[];
  /** null: any organisation, or none; a list: the line's organisation, or the one it left, must be one of them. */
  readonly organisations: readonly string[] | null;
}

export interface AuditQuery {
  readonly parts?: readonly AuditPart[];
  /** An action (`signin.refused`), or its family (`signin` also takes `signin.refused`). */
  readonly kind?: string;
  /** The acting account, with or without a token. */
  readonly actor?: string;
  /** A target's id or its name. */
  readonly target?: string;
  readonly targetKinds?: readonly string[];
  readonly notTargetKinds?: readonly string[];
  /** The organisation's id the line belongs to. */
  readonly organisation?: string;
  /** The caller's perimeter, the grants joined by OR; absent: everything (root). */
  readonly grants?: readonly AuditGrantQuery[];
  /** Epoch ms: `from` inclusive, `to` exclusive. */
  readonly from?: number;
  readonly to?: number;
  /** Searched case-insensitively, as typed, in the detail (a refusal's reason, a note) and the address. */
  readonly text?: string;
  /** The last id of the page before: the next page holds older events. */
  readonly afterId?: string;
  readonly limit: number;
}

const TEXT_COLUMNS = ['detail', 'address'];

/** `%`, `_` and the escape itself match only themselves. */
export const likePattern = (text: string): string => `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;

/**
 * One page, newest first, with one row more than `limit` when more remain. The filters are all
 * ANDed, and with them the caller's perimeter (its grants ORed): the same test as `matches` and
 * `visible` in core/audit apply to one event.
 */
export async function queryEvents(store: Store, q: AuditQuery): Promise<AuditRow[]> {
  const params: unknown[] = [];
  const among = (column: string, values: readonly string[], not = false): string => {
    if (values.length === 0) return not ? '1 = 1' : '1 = 0';
    params.push(...values);
    return `${column} ${not ? 'not in' : 'in'} (${values.map(() => '?').join(', ')})`;
  };
  const equal = (column: string, op: string, value: unknown): string => {
    params.push(value);
    return `${column} ${op} ?`;
  };
  const where: string[] = [];
  if (q.parts) where.push(among('part', q.parts));
  if (q.kind !== undefined) {
    params.push(q.kind, `${q.kind}.%`);
    // A kind holds only [a-z0-9.-] (core/audit/query.ts): no wildcard of LIKE hides in it.
    where.push('(action = ? or action like ?)');
  }
  if (q.actor !== undefined) where.push(equal('actor_account', '=', q.actor));
  if (q.target !== undefined) {
    params.push(q.target, q.target);
    where.push('(target_id = ? or target_name = ?)');
  }
  if (q.targetKinds) where.push(among('target_kind', q.targetKinds));
  if (q.notTargetKinds && q.notTargetKinds.length > 0) where.push(among('target_kind', q.notTargetKinds, true));
  if (q.organisation !== undefined) {
    params.push(q.organisation, q.organisation);
    where.push('(organisation = ? or organisation_from = ?)');
  }
  if (q.grants) {
    const ors = q.grants.map((g) => {
      const and = [among('part', g.parts), among('target_kind', g.targetKinds)];
      if (g.organisations !== null) and.push(`(${among('organisation', g.organisations)} or ${among('organisation_from', g.organisations)})`);
      return `(${and.join(' and ')})`;
    });
    where.push(ors.length > 0 ? `(${ors.join(' or ')})` : '1 = 0');
  }
  if (q.from !== undefined) where.push(equal('at', '>=', q.from));
  if (q.to !== undefined) where.push(equal('at', '<', q.to));
  if (q.text) {
    const pattern = likePattern(q.text);
    where.push(`(${TEXT_COLUMNS.map((c) => `lower(${c}) like ? escape '!'`).join(' or ')})`);
    for (const _ of TEXT_COLUMNS) params.push(pattern);
  }
  if (q.afterId !== undefined) where.push(equal('id', '<', q.afterId));
  const limit = (Number.isFinite(q.limit) ? Math.max(1, Math.trunc(q.limit)) : 1) + 1;
  params.push(limit);
  const sql = `select ${COLUMNS.map(([, column]) => column).join(', ')} from audit_events
    ${where.length > 0 ? `where ${where.join(' and ')}` : ''} order by id desc limit ?`;
  const rows = await selectRows(store.em(), sql, params);
  return rows.map(auditRow);
}

function auditRow(r: Record<string, unknown>): AuditRow {
  return {
    id: String(r.id), at: Number(r.at), part: String(r.part) as AuditPart, action: String(r.action),
    actorAccount: str(r.actor_account), actorToken: str(r.actor_token), targetKind: String(r.target_kind),
    targetId: str(r.target_id), targetName: str(r.target_name), organisation: str(r.organisation),
    ...(r.organisation_from != null ? { organisationFrom: String(r.organisation_from) } : {}),
    changes: json(r.changes), detail: str(r.detail), address: str(r.address), node: String(r.node),
    traceId: str(r.trace_id), attributes: json(r.attributes),
  };
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
