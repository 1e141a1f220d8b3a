/**
 * The bus between nodes on PostgreSQL: LISTEN/NOTIFY on one connection of its own. On SQLite
 * (one node) it is silent. A listener that loses its connection reports it; the actor's backstop
 * still looks once a minute.
 */
import type { Store } from './orm.ts';

/** PostgreSQL refuses a notification payload of 8000 bytes or more. */
export const MAX_PAYLOAD_BYTES = 7900;

interface RawPg {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: (msg: { channel: string; payload?: string }) => void): void;
  on(event: 'error', fn: (err: Error) => void): void;
}

interface KnexClient {
  acquireRawConnection(): Promise<RawPg>;
  destroyRawConnection(c: RawPg): Promise<void>;
}

function client(store: Store): KnexClient {
  return (store.orm.em.getConnection() as unknown as { getKnex(): { client: KnexClient } }).getKnex().client;
}

export interface Listener {
  close(): Promise<void>;
}

export async function listen(store: Store, channel: string, onNotify: (payload: string) => void, onError: (err: Error) => void): Promise<Listener> {
  if (store.driver !== 'postgresql') return { close: async () => {} };
  const c = client(store);
  const conn = await c.acquireRawConnection();
  conn.on('notification', (msg) => { if (msg.channel === channel) onNotify(msg.payload ?? ''); });
  conn.on('error', onError);
  await conn.query(`LISTEN ${channel}`);
  return { close: () => c.destroyRawConnection(conn).catch(() => undefined) };
}

export async function notify(store: Store, channel: string, payload = ''): Promise<void> {
  if (store.driver !== 'postgresql') return;
  await store.orm.em.getConnection().execute('select pg_notify(?, ?)', [channel, payload]);
}
