/**
 * The safety rules of the plain ports and the last certificate (spec 1.2 rules 6-7, 3.2):
 * HTTP goes off only while a certificate serves HTTPS on that plane; the last certificate of a
 * plane stays while HTTP is off; on the console, HTTP is not switched off while anything came
 * through it in the last 30 s (the asking request included), and the last certificate is not
 * removed while anything comes through HTTPS.
 */
import { GatewayError } from '../../http/errors.ts';
import { PLANE_NAMES, type ConsoleTraffic, type TlsPlane, type Via } from './messages.ts';

function seen(traffic: readonly ConsoleTraffic[], door: 'http' | 'https', via: Via | null): string | null {
  if (via?.plane === 'console' && via.door === door) return 'this very request';
  const row = traffic.find((t) => t.door === door);
  return row ? `${row.peer} (node ${row.node})` : null;
}

export function checkHttpOff(plane: TlsPlane, serving: number, traffic: readonly ConsoleTraffic[], via: Via | null): void {
  if (serving === 0) {
    throw new GatewayError('tls.nothing-to-present', `HTTP stays on: no certificate serves HTTPS on the ${PLANE_NAMES[plane]} plane. Place one there first.`);
  }
  if (plane !== 'console') return;
  const who = seen(traffic, 'http', via);
  if (who) {
    throw new GatewayError('tls.http-in-use', `HTTP stays on: the console was called through plain HTTP in the last 30 s, by ${who}. Open the console through HTTPS, wait until HTTP shows nothing for 30 s, then switch it off.`);
  }
}

/** A change of what a plane presents: its placements after it, and how many serve before and after (records.ts `servingCounter`). */
export interface PlaneChange {
  readonly placedAfter: number;
  readonly servingBefore: number;
  readonly servingAfter: number;
}

/**
 * What refuses a change on a console in use over HTTPS: a certificate removed or moved is a
 * placement refusal (`tls.last-certificate`, as when HTTP is off), a door mode that would leave
 * the others inactive is a settings refusal (`tls.https-in-use`), as CONTRACT.md lists them.
 */
export type LeavingBy = 'placement' | 'door-mode';

/**
 * A change that leaves `plane` with no certificate, or takes away the last one that serves (the
 * others inactive in the plane's mode, expired, not yet valid, unissued or not to be opened on this
 * node), is refused while HTTP is off there, or on a console in use over HTTPS.
 */
export function checkLeaving(plane: TlsPlane, change: PlaneChange, httpOff: readonly TlsPlane[], traffic: readonly ConsoleTraffic[], via: Via | null, by: LeavingBy): void {
  const emptied = change.placedAfter === 0;
  const darkened = change.servingBefore > 0 && change.servingAfter === 0;
  if (!emptied && !darkened) return;
  const what = emptied
    ? `This is the last certificate of the ${PLANE_NAMES[plane]} plane`
    : `After this change no certificate on the ${PLANE_NAMES[plane]} plane would serve HTTPS (those left are inactive in its mode, expired, not yet valid, not issued yet, or cannot be opened on this node)`;
  if (httpOff.includes(plane)) {
    throw new GatewayError('tls.last-certificate', `${what} and its plain HTTP port is off: switch HTTP on first, or place another certificate.`);
  }
  if (plane !== 'console') return;
  const who = seen(traffic, 'https', via);
  if (who) {
    throw new GatewayError(by === 'placement' ? 'tls.last-certificate' : 'tls.https-in-use', emptied
      ? `This is the console's last certificate and the console was called through HTTPS in the last 30 s, by ${who}; removing it would cut those callers off.`
      : `${what}, and the console was called through HTTPS in the last 30 s, by ${who}; the change would cut those callers off.`);
  }
}
