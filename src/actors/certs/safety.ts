/**
 * The safety rules of the plain ports and the last certificate (spec 1.2 rules 6-7, 3.2):
 * HTTP goes off only while a certificate serves HTTPS on that plane; the last certificate of a
 * plane stays while HTTP is off; on the console, HTTP is not switched off while anything came
 * through it in the last 30 s (the asking request included), and the last certificate is not
 * removed while anything comes through HTTPS.
 */
import { GatewayError } from '../../http/errors.ts';
import { PLANE_NAMES, type ConsoleTraffic, type Placement, type TlsPlane, type Via } from './messages.ts';

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

/** Certificates that leave `plane` must not leave it empty while HTTP is off, or on a console in use over HTTPS. */
export function checkLeaving(plane: TlsPlane, placements: readonly Placement[], leaving: ReadonlySet<string>, httpOff: readonly TlsPlane[], traffic: readonly ConsoleTraffic[], via: Via | null): void {
  const left = placements.filter((p) => p.plane === plane && !leaving.has(p.id)).length;
  if (left > 0) return;
  if (httpOff.includes(plane)) {
    throw new GatewayError('tls.last-certificate', `This is the last certificate of the ${PLANE_NAMES[plane]} plane and its plain HTTP port is off: switch HTTP on first, or place another certificate.`);
  }
  if (plane !== 'console') return;
  const who = seen(traffic, 'https', via);
  if (who) {
    throw new GatewayError('tls.https-in-use', `This is the console's last certificate and the console was called through HTTPS in the last 30 s, by ${who}; removing it would cut those callers off.`);
  }
}
