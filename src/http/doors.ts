/**
 * The door manager: the one place that knows each plane's doors and addresses. Doors open and
 * close while the gateway runs (a plain port moved to loopback, an HTTPS door opened by the
 * first certificate placed and closed by the last removed). Opening binds first and fails
 * before anything changes; a door replaced is opened before the old one stops, where the
 * address allows, as Caddy swaps its listeners.
 */
import type { Logger } from '../log/logger.ts';
import type { PlaneName } from '../settings/settings.ts';
import type { Door } from './uws-door.ts';
import type { TlsDoor } from './tls-door.ts';

export interface DoorOpeners {
  plain(plane: PlaneName, host: string, port: number): Door;
  https(plane: PlaneName): Promise<TlsDoor>;
}

export class Doors {
  readonly #plain = new Map<PlaneName, Door>();
  readonly #https = new Map<PlaneName, TlsDoor>();
  readonly #opening = new Map<PlaneName, Promise<TlsDoor>>();
  /** Closed doors whose requests still finish: drained and closed at stop. */
  readonly #retired = new Set<Door>();
  #stopped = false;

  constructor(private readonly openers: DoorOpeners, private readonly log: Logger) {}

  /** Every open door, plain first. */
  all(): Door[] {
    return [...this.#plain.values(), ...this.#https.values()];
  }

  plain(plane: PlaneName): Door | undefined {
    return this.#plain.get(plane);
  }

  https(plane: PlaneName): TlsDoor | undefined {
    return this.#https.get(plane);
  }

  openPlain(plane: PlaneName, host: string, port: number): Door {
    const door = this.openers.plain(plane, host, port);
    this.#plain.set(plane, door);
    this.announce(door);
    return door;
  }

  /**
   * Moves a plain door to another host on the same port (loopback only, or back). The old one
   * stops accepting first, since both cannot hold the port; if the new bind fails the old
   * address is taken again and the error is thrown.
   */
  rebindPlain(plane: PlaneName, host: string): Door {
    const old = this.#plain.get(plane);
    if (!old || this.#stopped) throw new Error(`the ${plane} plane has no plain door to move`);
    old.stopAccepting();
    this.#retired.add(old);
    try {
      const door = this.openers.plain(plane, host, old.port);
      this.#plain.set(plane, door);
      this.announce(door);
      return door;
    } catch (err) {
      const back = this.openers.plain(plane, old.address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1'), old.port);
      this.#plain.set(plane, back);
      throw err;
    }
  }

  /** The HTTPS door of a plane, opened (bound) when missing. Concurrent callers share one bind. */
  async ensureHttps(plane: PlaneName): Promise<TlsDoor> {
    if (this.#stopped) throw new Error('the gateway is stopping');
    const open = this.#https.get(plane);
    if (open) return open;
    let opening = this.#opening.get(plane);
    if (!opening) {
      opening = this.openers.https(plane).then((door) => {
        this.#https.set(plane, door);
        this.announce(door);
        return door;
      }).finally(() => this.#opening.delete(plane));
      this.#opening.set(plane, opening);
    }
    return opening;
  }

  /** Closes a plane's HTTPS door: no new connections; requests in flight finish, idle ones close. */
  closeHttps(plane: PlaneName): void {
    const door = this.#https.get(plane);
    if (!door) return;
    this.#https.delete(plane);
    door.stopAccepting();
    this.#retired.add(door);
    this.log.info('door closed', { plane, protocol: door.protocol, address: door.address });
  }

  private announce(door: Door): void {
    this.log.info('listening', { plane: door.plane, protocol: door.protocol, address: door.address });
  }

  get inFlight(): number {
    return [...this.all(), ...this.#retired].reduce((n, d) => n + d.inFlight, 0);
  }

  stopAccepting(): void {
    this.#stopped = true;
    for (const d of this.all()) d.stopAccepting();
  }

  async drain(timeoutMs: number): Promise<void> {
    await Promise.all([...this.all(), ...this.#retired].map((d) => d.drain(timeoutMs)));
  }

  close(): void {
    for (const d of [...this.all(), ...this.#retired]) d.close();
  }
}
