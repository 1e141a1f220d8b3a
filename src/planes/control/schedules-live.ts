/**
 * The scheduler screen's live feed (spec 1.1 rule 37, 6.2): `/api/schedules/live`, a WebSocket
 * on the control plane. It opens with `hello` (every schedule, as GET /api/schedules lists them
 * for the console), then forwards each scheduler feed event of this node, optionally narrowed to
 * one organisation and one route. docs/live.md is the wire format.
 */
import { GatewayError, invalidField } from '../../http/errors.ts';
import type { Exchange } from '../../http/exchange.ts';
import type { Router } from '../../http/router.ts';
import { CLOSE, type Socket, type SocketRequest, type SocketRoute, type SocketSession } from '../../http/socket.ts';
import type { FeedEvent, ScheduleKey, ScheduleRecord } from '../../actors/schedules/messages.ts';
import type { Page } from '../../core/paging.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';
import { acceptLive, addLiveRoute, liveFeed, stillAdmitted } from './live-feed.ts';
import { seconds } from './resource-docs.ts';
import { every, type Loop } from '../../clock/every.ts';

export const LIVE_PATH = '/api/schedules/live';
/** What the console needs to read schedules (schedules-api.ts, ownerOf). */
const CAPABILITY = 'app-admin';
/** Schedules read per call to the actor while hello is built. */
const HELLO_PAGE = 1000;
/** How often a feed asks again whether its credentials hold, events or not (the gateway clock). */
const RECHECK_MS = 30_000;

const FEED = liveFeed({
  path: LIVE_PATH, summary: 'Scheduler live feed (WebSocket)', tag: 'schedules', capability: CAPABILITY,
  filters: 'Query filters: organisation=<id> (or tenant=), routeId=<id> (or route=).', badFilter: 'an unknown or repeated filter (filter.invalid, field.invalid)',
  messages: [
    'hello {node, at, schedules}; run.started {scheduleId, runId, attempt, phase, scheduledFor, startedAt, node, cause};',
    'run.advanced {scheduleId, runId, attempt, phase, progress, detail}; run.retrying {scheduleId, runId, attempt, status, detail, nextAttemptAt};',
    'run.finished {scheduleId, run, nextRunAt}; schedule.changed {schedule}; schedule.deleted {scheduleId}.',
  ].join(' '),
});

/** A plain GET on the feed's address: a refusal that says how to open it. */
export function addSchedulesLiveRoute(router: Router<Principal>): void {
  addLiveRoute(router, FEED);
}

interface Filters {
  readonly organisation?: string;
  readonly routeId?: string;
}

type Place = Pick<ScheduleRecord, 'organisation' | 'routeId'>;

/** The names `GET /api/schedules` uses for the same filters, accepted too. */
const ALIASES: ReadonlyMap<string, 'organisation' | 'routeId'> = new Map([['tenant', 'organisation'], ['route', 'routeId']]);

/** Unknown or repeated parameters are refused: a typo is not "no filter". */
function readFilters(query: string): Filters {
  const f: { organisation?: string; routeId?: string } = {};
  for (const [given, value] of new URLSearchParams(query)) {
    const name = ALIASES.get(given) ?? given;
    if (name !== 'organisation' && name !== 'routeId') {
      throw new GatewayError('filter.invalid', `"${given}" is not a filter of the live feed; use organisation (or tenant) or routeId (or route).`, given);
    }
    if (f[name] !== undefined) throw invalidField(name, `${name} may be given once.`);
    if (value === '') throw invalidField(name, `${name} needs a value.`);
    f[name] = value;
  }
  return f;
}

const placeOf = (s: ScheduleRecord): Place => ({ organisation: s.organisation, routeId: s.routeId });

/**
 * One client. Events are handled one after the other on a promise chain, hello first: the feed
 * is subscribed before the list is read, so nothing falls between hello and the first event.
 */
class FeedSession implements SocketSession {
  #socket: Socket | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;
  #chain: Promise<void> = Promise.resolve();
  #recheck: Loop | undefined;
  /** Where each schedule is, to filter run.* events (which name only the schedule); filtered feeds only. */
  readonly #known = new Map<string, Place>();
  readonly #filtered: boolean;

  /** `head` is the upgrade request as the planes' authentication reads it, built once. */
  constructor(private readonly gw: GatewayContext, private readonly req: SocketRequest, private readonly head: Exchange, private readonly filters: Filters) {
    this.#filtered = filters.organisation !== undefined || filters.routeId !== undefined;
  }

  onOpen(socket: Socket): void {
    this.#socket = socket;
    this.#unsubscribe = this.gw.schedules.onFeed((event) => this.#then(() => this.#forward(event)));
    this.#then(() => this.#hello());
    // A quiet scheduler sends nothing for hours: the credentials are asked again on a timer too,
    // so a sign-out or a revocation ends the feed (and its subscription) without waiting for an event.
    this.#recheck = every(this.gw.clock, RECHECK_MS, async () => { this.#then(() => { this.#admitted(); }); }, () => {});
  }

  onClose(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    void this.#recheck?.stop();
  }

  #then(step: () => void | Promise<void>): void {
    this.#chain = this.#chain
      .then(async () => { if (!this.#closed) await step(); })
      .catch((err: unknown) => this.#fail(err));
  }

  #matches(p: Place): boolean {
    return (this.filters.organisation === undefined || p.organisation === this.filters.organisation)
      && (this.filters.routeId === undefined || p.routeId === this.filters.routeId);
  }

  async #hello(): Promise<void> {
    if (!this.#admitted()) return;
    // Every actor must be sending the feed before the list is read, or an event could fall between.
    await this.gw.schedules.feedReady();
    // hello holds every schedule, whatever the list API's page size.
    const all: ScheduleRecord[] = [];
    let after: ScheduleKey | null = null;
    do {
      const page: Page<ScheduleRecord, ScheduleKey> = await this.gw.schedules.call('schedule.list', { owner: null, filters: [], limit: HELLO_PAGE, after });
      all.push(...page.items);
      after = page.next;
    } while (after !== null);
    if (this.#filtered) for (const s of all) this.#known.set(s.id, placeOf(s));
    // Asked again after the reads: a sign-out meanwhile gets nothing.
    if (!this.#admitted()) return;
    this.#socket?.send({
      type: 'hello', node: this.gw.settings.nodeName, at: seconds(this.gw.clock.now()),
      schedules: this.#filtered ? all.filter((s) => this.#matches(s)) : all,
    });
  }

  async #forward(event: FeedEvent): Promise<void> {
    if (!this.#admitted()) return;
    if (await this.#shows(event) && this.#admitted()) this.#socket?.send(event);
  }

  /** A schedule leaving the filter is sent once more (changed, or deleted) so a screen can drop it. */
  async #shows(event: FeedEvent): Promise<boolean> {
    if (!this.#filtered) return true;
    switch (event.type) {
      case 'schedule.changed': {
        const before = this.#known.get(event.schedule.id);
        this.#known.set(event.schedule.id, placeOf(event.schedule));
        return this.#matches(event.schedule) || (before !== undefined && this.#matches(before));
      }
      case 'schedule.deleted': {
        const before = this.#known.get(event.scheduleId);
        this.#known.delete(event.scheduleId);
        return before !== undefined && this.#matches(before);
      }
      default: {
        let place = this.#known.get(event.scheduleId);
        if (!place) {
          // Not seen yet (written on another node): ask once, then remember.
          const s = await this.gw.schedules.call('schedule.get', { id: event.scheduleId, owner: null });
          if (!s) return false;
          place = placeOf(s);
          this.#known.set(s.id, place);
        }
        return this.#matches(place);
      }
    }
  }

  /** Credentials are checked again before each message: a sign-out or a revocation ends the feed. */
  #admitted(): boolean {
    return stillAdmitted(this.gw, this.head, FEED, this.#socket);
  }

  #fail(err: unknown): void {
    if (err instanceof GatewayError && err.status === 503) {
      this.#socket?.close(CLOSE.tryAgain, `${err.detail} Reconnect.`);
      return;
    }
    this.gw.log.error('the schedules live feed failed', { path: LIVE_PATH, remote: this.req.remoteAddress, ...errorAttrs(err) });
    this.#socket?.close(CLOSE.internal, 'internal error; the gateway\'s operational log has the details');
  }
}

/** The WebSocket route the control plane's door serves at /api/schedules/live. */
export function schedulesLiveSocket(gw: GatewayContext): SocketRoute {
  return {
    path: LIVE_PATH,
    accept: acceptLive(gw, FEED, (req, head) => new FeedSession(gw, req, head, readFilters(req.query))),
    onError: (err) => gw.log.error('a schedules live feed callback failed', { path: LIVE_PATH, ...errorAttrs(err) }),
  };
}
