/**
 * Keeps the doors in line with the certificate store (spec 1.2 rules 1, 3, 6): a plane's HTTPS
 * door is open while a certificate is presented there and closed when none is (each handshake
 * asks the view which certificate to present); a plain port switched off listens on
 * 127.0.0.1 only. Changes are applied one at a time, in order.
 */
import type { Logger } from '../log/logger.ts';
import type { PlaneName, Settings } from '../settings/settings.ts';
import { isLoopback } from '../settings/address.ts';
import type { Doors } from '../http/doors.ts';
import { DoorBindError } from '../http/uws-door.ts';
import { GatewayError } from '../http/errors.ts';
import type { TlsView } from '../actors/certs/view.ts';
import { TLS_PLANES, type TlsPlane } from '../actors/certs/messages.ts';

export const PLANE_OF: Readonly<Record<TlsPlane, PlaneName>> = { console: 'control', app: 'data', internal: 'internal' };
export const TLS_PLANE_OF: Readonly<Record<PlaneName, TlsPlane>> = { control: 'console', data: 'app', internal: 'internal' };

export interface TlsDoorControl {
  /**
   * Binds the HTTPS doors of `planes` that are not open yet, before a placement is written, so a
   * port that cannot be bound refuses the placement with nothing changed (`tls.bind-failed`).
   */
  prepare(planes: readonly TlsPlane[]): Promise<void>;
  /** Brings the doors in line with the view (after a write, refused or not). */
  reconcile(): Promise<void>;
  /**
   * Opens the plain doors at start: on 127.0.0.1 where the view says HTTP is off, so a port
   * switched off never listens on every interface, not even between the bind and the first
   * reconcile.
   */
  openPlain(): void;
}

export function followTlsDoors(opts: { view: TlsView; doors: Doors; settings: Settings; log: Logger }): TlsDoorControl {
  const { view, doors, settings, log } = opts;
  const loopbackOnly = new Set<TlsPlane>();
  let chain: Promise<void> = Promise.resolve();
  /** Where a plane's plain door listens: as configured, or 127.0.0.1 while its HTTP is off. */
  const plainHost = (plane: PlaneName, off: boolean): string => {
    const configured = settings.listen[plane];
    return off && !isLoopback(configured) ? '127.0.0.1' : configured.host;
  };

  const once = async (): Promise<void> => {
    for (const tp of TLS_PLANES) {
      const plane = PLANE_OF[tp];
      if (view.served(tp).length > 0) {
        try {
          await doors.ensureHttps(plane);
        } catch (err) {
          // Another node placed it; this one cannot bind: said, and tried again at the next change.
          log.error('an HTTPS door cannot open on this node', { plane, error: (err as Error).message });
        }
      } else {
        doors.closeHttps(plane);
      }
      const off = view.settings.httpOff.includes(tp);
      if (off !== loopbackOnly.has(tp) && doors.plain(plane)) {
        // A door configured on loopback already listens there only: nothing moves.
        if (!isLoopback(settings.listen[plane])) {
          try {
            doors.rebindPlain(plane, plainHost(plane, off));
            log.info(off ? 'plain HTTP port now on 127.0.0.1 only' : 'plain HTTP port open again', { plane });
          } catch (err) {
            // Not marked as moved: the next change of the view tries again.
            log.error('the plain HTTP port could not move', { plane, error: (err as Error).message });
            continue;
          }
        }
        if (off) loopbackOnly.add(tp);
        else loopbackOnly.delete(tp);
      }
    }
  };
  const reconcile = (): Promise<void> => (chain = chain.then(once, once));
  view.onChange(() => { void reconcile(); });

  return {
    reconcile,
    openPlain: () => {
      for (const tp of TLS_PLANES) {
        const plane = PLANE_OF[tp];
        const off = view.settings.httpOff.includes(tp);
        if (off) loopbackOnly.add(tp);
        doors.openPlain(plane, plainHost(plane, off), settings.listen[plane].port);
      }
    },
    prepare: async (planes) => {
      for (const tp of planes) {
        try {
          await doors.ensureHttps(PLANE_OF[tp]);
        } catch (err) {
          if (err instanceof DoorBindError) throw new GatewayError('tls.bind-failed', `${err.message}; nothing was changed.`);
          throw err;
        }
      }
    },
  };
}
