/**
 * How an actor that serves a snapshot folds in changes other processes wrote (other nodes, the
 * CLI): a look compares the change mark with the one last published and publishes again when it
 * moved. On PostgreSQL a committed change is announced at once on the change bus (migration
 * 0007); the poll is the backstop, and the only way on SQLite. Looks never overlap: one asked
 * for while another runs follows it. A failing look reports once and keeps the last snapshot.
 */
import type { Logger } from '../log/logger.ts';
import { errorAttrs } from '../log/logger.ts';
import type { Store } from '../store/orm.ts';
import { listen } from '../store/notify.ts';

/** Announced by the `changes` trigger on PostgreSQL (migration 0007). */
export const CHANGE_CHANNEL = 'meerkat_config';

export interface ChangeFollower {
  /** Asks for a look now (after a local event that may have changed things). */
  look(): void;
  /** Stops polling and listening; waits for the look in progress. */
  close(): Promise<void>;
}

export interface FollowOptions {
  readonly store: Store;
  readonly log: Logger;
  readonly pollMs: number;
  /** What is followed, for the sentences: "configuration", "certificates". */
  readonly what: string;
  /** The mark as the database holds it now. */
  readonly readMark: () => Promise<string>;
  /** The mark of the snapshot last published. */
  readonly publishedMark: () => string;
  readonly publish: () => Promise<void>;
}

export async function followChanges(opts: FollowOptions): Promise<ChangeFollower> {
  let failing = false;
  let tick: Promise<void> | undefined;
  let again = false;
  const look = (): void => {
    if (tick) {
      again = true;
      return;
    }
    tick = (async () => {
      try {
        if ((await opts.readMark()) !== opts.publishedMark()) await opts.publish();
        if (failing) opts.log.info(`${opts.what} store reachable again`);
        failing = false;
      } catch (err) {
        if (!failing) opts.log.warn(`cannot read ${opts.what} changes; serving the last snapshot`, errorAttrs(err));
        failing = true;
      }
    })().finally(() => {
      tick = undefined;
      if (again) {
        again = false;
        look();
      }
    });
  };
  const poll = setInterval(look, opts.pollMs);
  const bus = await listen(opts.store, CHANGE_CHANNEL, look, (err) => {
    opts.log.warn(`the change bus lost its connection; ${opts.what} changes from other nodes arrive within ${Math.round(opts.pollMs / 1000)} s`, errorAttrs(err));
  });
  return {
    look,
    close: async () => {
      clearInterval(poll);
      await bus.close();
      await tick;
    },
  };
}

/**
 * A queue of steps that run one at a time, each after the one before it ended. An actor's
 * publishes go through it, and every other emit that a snapshot would overwrite: a write
 * publishes before it answers, and a look may publish at the same moment (on PostgreSQL the
 * change bus announces every commit). Run side by side, a snapshot read before the write's commit
 * could be sent after the write's own, and the caller's next request would meet the older one (a
 * token just minted, refused; a session just opened, unknown). In order, the last sent is the newest.
 */
export function inOrder(): <T>(step: () => T | Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (step) => {
    const next = last.then(step, step);
    last = next.catch(() => {});
    return next;
  };
}
