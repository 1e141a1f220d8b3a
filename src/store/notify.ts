/**
 * The bus between nodes on PostgreSQL: LISTEN/NOTIFY on one connection of its own. On SQLite
 * (one node) it is silent. A listener that loses its connection reports it once, connects again
 * (1 s, doubling up to 30 s) and then calls `onNotify('')` once: notifications sent while it was
 * away are lost, so the owner resyncs as if told. The owners' polls remain the backstop.
 */
import type { Store } from './orm.ts';

/** PostgreSQL refuses a notification payload of 8000 bytes or more. */
export const MAX_PAYLOAD_BYTES = 7900;

interface RawPg {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: (msg: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', fn: (err?: Error) => void): void;
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
  let closed = false;
  let conn: RawPg | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = 1000;

  const open = async (): Promise<void> => {
    const next = await c.acquireRawConnection();
    let lost = false;
    const drop = (err?: Error) => {
      if (lost || closed) return;
      lost = true;
      onError(err ?? new Error('the notification connection ended'));
      void c.destroyRawConnection(next).catch(() => undefined);
      schedule();
    };
    next.on('notification', (msg) => { if (msg.channel === channel) onNotify(msg.payload ?? ''); });
    next.on('error', drop);
    next.on('end', drop);
    await next.query(`LISTEN ${channel}`);
    conn = next;
  };
  const schedule = () => {
    if (closed) return;
    conn = undefined;
    retry = setTimeout(() => {
      open().then(() => {
        delay = 1000;
        onNotify('');
      }, () => {
        delay = Math.min(delay * 2, 30_000);
        schedule();
      });
    }, delay);
    retry.unref();
  };

  await open();
  return {
    close: async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      if (conn) await c.destroyRawConnection(conn).catch(() => undefined);
    },
  };
}

export async function notify(store: Store, channel: string, payload = ''): Promise<void> {
  if (store.driver !== 'postgresql') return;
  await store.orm.em.getConnection().execute('select pg_notify(?, ?)', [channel, payload]);
}
