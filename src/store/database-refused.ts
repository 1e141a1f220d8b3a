/**
 * A PostgreSQL database the server refuses because GATEWAY_DATABASE_URL itself is wrong, not
 * because of the server's state: no such database (3D000), no such role or a password refused
 * (28000, 28P01). Waiting would not change it, so `start` stops as for a setting refused (78) and
 * a CLI command says there is no gateway there; a server that does not answer stays a failure at
 * run time. Kept apart from orm.ts so that the main thread can tell it without loading the ORM.
 */
const REFUSED_BY_SERVER: ReadonlySet<string> = new Set(['3D000', '28000', '28P01']);

export class DatabaseRefusedError extends Error {
  override readonly name = 'DatabaseRefusedError';
}

/** The driver's error says the URL is wrong (the codes above). */
export function refusedByServer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && REFUSED_BY_SERVER.has(code);
}
