/**
 * Carries feed events to every node's console sockets. On SQLite (one node) an event goes
 * straight to this node's main thread. On PostgreSQL the events of a moment are gathered and sent
 * as one NOTIFY (a few per second at most, whatever the load); one actor per node listens and hands
 * what it hears, its own node's events included, to its main thread. The feed is best effort: a
 * lost notification costs a screen update, never a run (the history holds every run).
 */
import type { Logger } from '../../log/logger.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { Store } from '../../store/orm.ts';
import { listen, MAX_PAYLOAD_BYTES, notify, type Listener } from '../../store/notify.ts';
import type { FeedEvent } from './messages.ts';

export const FEED_CHANNEL = 'meerkat_schedules_feed';
/** How long events gather before one notification carries them. */
const GATHER_MS = 25;

export interface FeedBusOptions {
  readonly store: Store;
  readonly log: Logger;
  /** To this node's main thread. */
  readonly deliver: (event: FeedEvent) => void;
  /** Whether this actor is the one of its node that listens to the cluster. */
  readonly listener: boolean;
  /** Whether this node's main thread wants the feed at start (then `want()` tells). */
  readonly wanted: boolean;
}

export class FeedBus {
  #pending: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #listener: Listener | undefined;
  #sending: Promise<void> = Promise.resolve();
  readonly #cluster: boolean;
  #wanted: boolean;

  constructor(private readonly o: FeedBusOptions) {
    this.#cluster = o.store.driver === 'postgresql';
    this.#wanted = o.wanted;
  }

  /** Nobody listening on this node: nothing is handed to its main thread (the cluster still hears). */
  want(on: boolean): void {
    this.#wanted = on;
  }

  #deliver(event: FeedEvent): void {
    if (this.#wanted) this.o.deliver(event);
  }

  async start(): Promise<void> {
    if (!this.#cluster || !this.o.listener) return;
    this.#listener = await listen(this.o.store, FEED_CHANNEL, (payload) => {
      // '' after a reconnect: the feed is live only; what was missed meanwhile is not replayed.
      if (payload === '') return;
      try {
        if (this.#wanted) for (const event of JSON.parse(payload) as FeedEvent[]) this.o.deliver(event);
      } catch (err) {
        this.o.log.warn('a scheduler feed notification could not be read', errorAttrs(err));
      }
    }, (err) => this.o.log.warn('the scheduler feed lost its cluster connection; consoles on this node miss other nodes\' runs until it is back', errorAttrs(err)));
  }

  publish(event: FeedEvent): void {
    if (!this.#cluster) {
      this.#deliver(event);
      return;
    }
    this.#pending.push(fitted(event));
    this.#timer ??= setTimeout(() => this.#flush(), GATHER_MS);
  }

  #flush(): void {
    this.#timer = undefined;
    const texts = this.#pending;
    this.#pending = [];
    this.#sending = this.#sending.then(async () => {
      for (const payload of payloads(texts)) {
        try {
          await notify(this.o.store, FEED_CHANNEL, payload);
        } catch (err) {
          // This node's consoles still hear of their own node's runs.
          for (const e of JSON.parse(payload) as FeedEvent[]) this.#deliver(e);
          this.o.log.warn('scheduler feed events could not be sent to the cluster', errorAttrs(err));
        }
      }
    });
  }

  async stop(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#flush();
    }
    await this.#sending;
    await this.#listener?.close();
  }
}

/** An event as JSON within one notification: a record too large to cross goes without its body and headers. */
function fitted(event: FeedEvent): string {
  const text = JSON.stringify(event);
  if (Buffer.byteLength(text) + 2 <= MAX_PAYLOAD_BYTES) return text;
  if (event.type === 'schedule.changed') {
    const { body: _b, headers: _h, ...rest } = event.schedule;
    const slim = JSON.stringify({ ...event, schedule: { ...rest, headers: {}, truncated: true } });
    if (Buffer.byteLength(slim) + 2 <= MAX_PAYLOAD_BYTES) return slim;
  }
  if (event.type === 'run.finished') {
    return JSON.stringify({ ...event, run: { ...event.run, detail: event.run.detail?.slice(0, 500), attempts: undefined } });
  }
  return JSON.stringify({ type: event.type, scheduleId: 'scheduleId' in event ? event.scheduleId : event.schedule.id, truncated: true });
}

/** JSON arrays of events, each within the payload limit. */
function* payloads(texts: readonly string[]): Generator<string> {
  let batch: string[] = [];
  let size = 2;
  for (const t of texts) {
    const n = Buffer.byteLength(t) + 1;
    if (batch.length > 0 && size + n > MAX_PAYLOAD_BYTES) {
      yield `[${batch.join(',')}]`;
      batch = [];
      size = 2;
    }
    batch.push(t);
    size += n;
  }
  if (batch.length > 0) yield `[${batch.join(',')}]`;
}
