/**
 * What the actors that own a snapshot (config, certs) share in a cluster: saying which change
 * their snapshot holds (after each publish, and every few seconds to say the node is alive), and
 * answering a write only once every other node alive holds it (store/node-marks.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorAttrs, type Logger } from '../log/logger.ts';
import type { Store } from '../store/orm.ts';
import { forgetNode, markNode, NODE_BEAT_MS, nodesBehind, type Served } from '../store/node-marks.ts';

/** How long a write waits for the other nodes to serve it, and how often it looks. */
const SERVED_WAIT_MS = 2_000;
const SERVED_POLL_MS = 10;

export interface NodeServing {
  /** The snapshot now holds the changes up to `changeId`. */
  holds(changeId: number): Promise<void>;
  /** Resolves once the other nodes alive hold `changeId`, or after SERVED_WAIT_MS (said). */
  served(changeId: number): Promise<void>;
  stop(): Promise<void>;
}

export function nodeServing(o: { store: Store; node: string; what: Served; log: Logger }): NodeServing {
  let held = 0;
  let failing = false;
  const say = async (): Promise<void> => {
    try {
      await markNode(o.store, o.node, o.what, held);
      failing = false;
    } catch (err) {
      // Background work reports once and goes on: the next publish or beat tries again.
      if (!failing) o.log.warn(`cannot say which ${o.what} change this node serves; writers on other nodes will not wait for it`, errorAttrs(err));
      failing = true;
    }
  };
  const beat = setInterval(() => void say(), NODE_BEAT_MS);
  beat.unref();
  return {
    holds: async (changeId) => {
      held = Math.max(held, changeId);
      await say();
    },
    served: async (changeId) => {
      const until = Date.now() + SERVED_WAIT_MS;
      let behind = await nodesBehind(o.store, o.node, o.what, changeId);
      while (behind.length > 0 && Date.now() < until) {
        await sleep(SERVED_POLL_MS);
        behind = await nodesBehind(o.store, o.node, o.what, changeId);
      }
      if (behind.length > 0) o.log.warn(`a ${o.what} change is answered before every node serves it`, { change: changeId, nodes: behind.join(','), waitedMs: SERVED_WAIT_MS });
    },
    stop: async () => {
      clearInterval(beat);
      await forgetNode(o.store, o.node, o.what).catch(() => { /* its row ages out in NODE_ALIVE_MS */ });
    },
  };
}
