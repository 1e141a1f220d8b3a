/**
 * Which change each node's snapshots hold (migration 0017), so that a write on one node is
 * answered once every node serves it. PostgreSQL only: on SQLite there is one node. Times are the
 * database's own, so nodes whose clocks differ (or stand still under test) agree on who is alive.
 */
import type { Store } from './orm.ts';
import { selectRows } from './rows.ts';

/** A node heard from within this long is waited for; one silent longer is taken for gone. */
export const NODE_ALIVE_MS = 15_000;
/** Every node says it is alive this often, holding a change or not. */
export const NODE_BEAT_MS = 5_000;

/** The actor whose snapshot a mark is: the configuration's, or the certificates'. */
export type Served = 'config' | 'certs';

const DB_NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** This node's `what` now holds the changes up to `changeId`. */
export async function markNode(store: Store, node: string, what: Served, changeId: number): Promise<void> {
  if (store.driver !== 'postgresql') return;
  await selectRows(store.em(), `insert into node_marks (node, what, change_id, at) values (?, ?, ?, ${DB_NOW_MS})
    on conflict (node, what) do update set change_id = greatest(node_marks.change_id, excluded.change_id), at = excluded.at`, [node, what, changeId]);
}

/**
 * The nodes alive whose `what` does not hold `changeId` yet, other than `node`. Configuration and
 * certificate writes run one after the other in the cluster (orm.ts `lockConfiguration`), so
 * change ids commit in order: a node holding a later id holds this one too.
 */
export async function nodesBehind(store: Store, node: string, what: Served, changeId: number): Promise<string[]> {
  if (store.driver !== 'postgresql') return [];
  const rows = await selectRows(store.em(), `select node from node_marks where what = ? and node <> ? and change_id < ? and at > ${DB_NOW_MS} - ?`, [what, node, changeId, NODE_ALIVE_MS]);
  return rows.map((r) => String(r.node));
}

/** A node stopping cleanly is no longer waited for. */
export async function forgetNode(store: Store, node: string, what: Served): Promise<void> {
  if (store.driver !== 'postgresql') return;
  await selectRows(store.em(), 'delete from node_marks where node = ? and what = ?', [node, what]);
}
