/**
 * The Logs screen's live feed (spec 1.4 rule 3; CONTRACT.md "Live feeds"): `/api/logs/live`, a
 * WebSocket on the control plane. It opens with `hello` (this node's buffer, as GET /api/logs
 * answers it, with the level in force), then sends each new operational line that passes the
 * filters, and `level` each time the level moves (set on any node, or returned to the startup
 * one). Root or infra-admin; docs/live.md has the wire format.
 */
import { GatewayError } from '../../http/errors.ts';
import type { Router } from '../../http/router.ts';
import { type Socket, type SocketRoute, type SocketSession } from '../../http/socket.ts';
import type { Exchange } from '../../http/exchange.ts';
import { RANK, errorAttrs } from '../../log/logger.ts';
import type { ConsoleLine, LineQuery } from '../../log/console-buffer.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';
import { acceptLive, addLiveRoute, liveFeed, stillAdmitted } from './live-feed.ts';
import { LOGS_CAPABILITY, lineQuery, wire } from './logs-api.ts';
import { seconds } from './resource-docs.ts';

export const LOGS_LIVE_PATH = '/api/logs/live';

const FEED = liveFeed({
  path: LOGS_LIVE_PATH, summary: 'Operational log live feed (WebSocket)', tag: 'logs', capability: LOGS_CAPABILITY,
  filters: 'Query filters: level (that level and above), q (text looked for).', badFilter: 'a bad filter (filter.invalid, field.invalid)',
  messages: 'hello {node, at, level, startupLevel, revertsAt, lines}; line {line}; level {level, startupLevel, revertsAt}.',
});

export function addLogsLiveRoute(router: Router<Principal>): void {
  addLiveRoute(router, FEED);
}

class LogFeed implements SocketSession {
  #socket: Socket | undefined;
  readonly #stop: Array<() => void> = [];
  readonly #floor: number;
  readonly #needle: string;

  constructor(private readonly gw: GatewayContext, private readonly head: Exchange, private readonly query: LineQuery) {
    this.#floor = query.level === undefined ? 0 : RANK[query.level];
    this.#needle = query.q?.trim().toLowerCase() ?? '';
  }

  onOpen(socket: Socket): void {
    this.#socket = socket;
    if (!this.#admitted()) return;
    // Followed before hello is sent: both happen in this turn, so no line falls between them.
    this.#stop.push(this.gw.logs.buffer.follow((line) => this.#line(line)));
    this.#stop.push(this.gw.hub.onLevel(() => this.#level()));
    socket.send({ type: 'hello', node: this.gw.settings.nodeName, at: seconds(this.gw.clock.now()), ...this.#levelState(), lines: this.gw.logs.buffer.lines(this.query).map(wire) });
  }

  onClose(): void {
    for (const fn of this.#stop.splice(0)) fn();
  }

  #line(line: ConsoleLine): void {
    if (RANK[line.level] < this.#floor) return;
    if (this.#needle !== '' && !this.gw.logs.buffer.matches(line, this.#needle)) return;
    // A line about the feed's own refusal must not loop back into a closing socket.
    if (!this.#admitted()) return;
    this.#socket?.send({ type: 'line', line: wire(line) });
  }

  #level(): void {
    if (this.#admitted()) this.#socket?.send({ type: 'level', ...this.#levelState() });
  }

  #levelState() {
    const s = this.gw.logs.level();
    return { level: s.level, startupLevel: s.startupLevel, revertsAt: s.revertsAt === null ? null : seconds(s.revertsAt) };
  }

  #admitted(): boolean {
    const ok = stillAdmitted(this.gw, this.head, FEED, this.#socket);
    if (!ok) this.onClose();
    return ok;
  }
}

/** The WebSocket route the control plane's doors serve at /api/logs/live. */
export function logsLiveSocket(gw: GatewayContext): SocketRoute {
  return {
    path: LOGS_LIVE_PATH,
    accept: acceptLive(gw, FEED, (req, head) => new LogFeed(gw, head, lineQuery(new URLSearchParams(req.query), false))),
    onError: (err) => gw.log.error('a logs live feed callback failed', { path: LOGS_LIVE_PATH, ...(err instanceof GatewayError ? { code: err.code } : {}), ...errorAttrs(err) }),
  };
}
