/**
 * One node per name on a PostgreSQL database. A node's name keys what it owns in the cluster's
 * tables (the calls it has in flight, its metrics rows, its marks); a second node started under
 * the same name (a replica scaled from one template that sets GATEWAY_NODE_NAME) would take over
 * the first one's calls and overwrite its rows, without a word. Each node holds a session advisory
 * lock keyed by its name on a connection of its own for as long as it runs: the second one is
 * refused at start, and a node that dies lets go with its connection, so its restart is not held up.
 */
import pg from 'pg';
import type { Logger } from '../log/logger.ts';

/** The first key of the two-key advisory lock: names cannot meet the other locks' single keys. */
const NODE_NAME_SPACE = 0x6e6f_6465; // "node"
/** A lost connection is opened again this often until the name is held again. */
const RETRY_MS = 5_000;

/** Another node holds the name: the start is refused (the gateway reports it as a setting refused). */
export class NodeNameTakenError extends Error {
  override readonly name = 'NodeNameTakenError';
}

export interface NodeNameLock {
  release(): Promise<void>;
}

function take(client: pg.Client, name: string): Promise<boolean> {
  return client.query<{ held: boolean }>('select pg_try_advisory_lock($1::int, hashtext($2)) as held', [NODE_NAME_SPACE, name])
    .then((r) => r.rows[0]?.held === true);
}

/**
 * Takes the name, or throws NodeNameTakenError when another node holds it. The
 * connection is watched: lost, it is opened again and the name taken again; if another node took
 * it meanwhile, that is said in the log as an error, every time it is tried.
 */
export async function holdNodeName(databaseUrl: string, name: string, log: Logger): Promise<NodeNameLock> {
  let client = await open(databaseUrl, name);
  if (!(await take(client, name).catch(async (err: unknown) => { await client.end().catch(() => {}); throw err; }))) {
    await client.end().catch(() => {});
    throw new NodeNameTakenError(`Another gateway runs on this database under the node name "${name}": give each node its own GATEWAY_NODE_NAME (the default, host name-pid, is one per process), or stop the other first.`);
  }
  let released = false;
  let timer: NodeJS.Timeout | undefined;
  const watch = (c: pg.Client) => {
    c.on('error', (err) => {
      if (released) return;
      log.warn('the connection holding this node\'s name was lost; opening it again', { node: name, error: err.message });
      void c.end().catch(() => {});
      schedule();
    });
  };
  const schedule = () => {
    if (released || timer) return;
    timer = setTimeout(() => { timer = undefined; void retake(); }, RETRY_MS);
    timer.unref();
  };
  const retake = async () => {
    let next: pg.Client | undefined;
    try {
      next = await open(databaseUrl, name);
      if (!released && await take(next, name)) {
        client = next;
        watch(next);
        log.info('this node\'s name is held again', { node: name });
        return;
      }
      if (!released) log.error('another gateway took this node\'s name while its connection was lost: two nodes now run under one name', { node: name });
    } catch (err) {
      log.warn('the connection holding this node\'s name cannot be opened yet', { node: name, error: (err as Error).message });
    }
    await next?.end().catch(() => {});
    schedule();
  };
  watch(client);
  return {
    release: async () => {
      released = true;
      if (timer) clearTimeout(timer);
      // Ending the session lets go of its locks.
      await client.end().catch(() => {});
    },
  };
}

async function open(databaseUrl: string, name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: `meerkat ${name}`.slice(0, 63) });
  // Until `watch` replaces it: an error before then must not be an unhandled 'error' event.
  client.on('error', () => {});
  await client.connect();
  return client;
}
