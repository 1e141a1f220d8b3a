/**
 * Which placed certificates a plane uses in its mode (spec 1.2 rules 14, 15 table, 17). With
 * public names declared, a gateway-served plane presents the certificates carrying one of them;
 * behind a proxy, the proxy presents the public names and the plane serves the others (the hop's
 * internal names; the runtime cannot say them for the console and application planes, so every
 * placed certificate except those covering the public names). A certificate that does not fit
 * stays placed, marked inactive, and serves again when the plane switches back. Without declared
 * names every placed certificate is used. The internal plane has no mode.
 */
import type { DoorSettings } from '../../core/tls/door-names.ts';
import { covers } from '../../core/tls/names.ts';
import type { DoorPlane, TlsPlane } from './messages.ts';

export function fitsMode(names: readonly string[], plane: TlsPlane, doors: Readonly<Record<DoorPlane, DoorSettings>>): boolean {
  if (plane === 'internal') return true;
  const door = doors[plane];
  if (door.names.length === 0) return true;
  const carriesPublic = door.names.some((n) => covers(names, n));
  return door.proxied ? !carriesPublic : carriesPublic;
}
