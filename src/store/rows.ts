/**
 * Values of rows read by plain statements, where the ORM would make an entity of each row only for
 * the caller to copy its fields out (the configuration snapshot, the audit trail's pages).
 */
import type { EntityManager } from '@mikro-orm/core';

export type Row = Record<string, unknown>;

/** Runs a plain statement and gives its rows (none for a write). */
export async function selectRows(em: EntityManager, sql: string, params: readonly unknown[] = []): Promise<Row[]> {
  return (await em.getConnection().execute(sql, [...params], 'all')) as Row[];
}

export const str = (v: unknown): string | null => (v == null ? null : String(v));
/** JSON comes back parsed from PostgreSQL and as text from SQLite. */
export const json = (v: unknown): unknown => (v == null ? null : typeof v === 'string' ? JSON.parse(v) : v);
/** PostgreSQL's booleans, SQLite's 0 and 1. */
export const flag = (v: unknown): boolean => v === true || v === 1;
