/**
 * A database that cannot take a request now (stopped, unreachable, full, read-only, or its one
 * writer held elsewhere past the busy timeout) is an outage, not a bug: the caller is told 503 and
 * may try again, and the operator reads a warning, not an error with a stack. The error may have
 * crossed from an actor's thread, where only its name, code and message travel.
 */

/** PostgreSQL SQLSTATEs: connection exceptions (class 08), shutting down or starting up, no room. */
const PG_STATES = /^(08\d{3}|57P0[1-3]|53[123]00|25006)$/;
/** The sockets' own codes, as pg and the pool report them. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLite's primary result codes for a file it cannot write now. */
const SQLITE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|PROTOCOL)/;
const MESSAGES = [
  /database is locked/i,
  /database or disk is full/i,
  /attempt to write a readonly database/i,
  /disk I\/O error/i,
  /Connection terminated/i,
  /Timeout acquiring a connection/i,
  /the database system is (shutting down|starting up|in recovery mode)/i,
  /is not currently accepting connections/i,
  /terminating connection due to administrator command/i,
  /is not queryable/i,
  // knex's word for a transaction whose BEGIN or COMMIT the database refused (SQLite's lock held
  // past the busy timeout): the cause is the database's, and no statement of ours ran half-way.
  /Transaction query already complete/i,
];

export function storeUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: unknown; sqlState?: unknown };
  if (e.name === 'ConnectionException') return true;
  for (const code of [e.code, e.sqlState]) {
    if (typeof code !== 'string') continue;
    if (PG_STATES.test(code) || SOCKET_CODES.has(code) || SQLITE_CODES.test(code)) return true;
  }
  return MESSAGES.some((m) => m.test(e.message));
}
