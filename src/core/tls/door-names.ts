/**
 * The public names a console or application door declares (spec 1.2 rules 13 and 15): each one
 * host name, written in full. A certificate may carry a wildcard or an IP address; a declared
 * name never does, because it is what links are mailed to and what signed tokens are issued by.
 * A name belongs to one plane.
 */
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { GatewayError, invalidField } from '../../http/errors.ts';
import { parseProxyAddresses } from '../../http/trusted-proxies.ts';

/** Who serves a plane's public names (spec 1.2 rules 13-18): the gateway itself, or a proxy. */
export interface DoorSettings {
  readonly proxied: boolean;
  /** Public names, one full host name each; a name belongs to one plane. */
  readonly names: readonly string[];
  /** CIDR ranges or addresses of the proxy; empty: loopback and private ranges. */
  readonly proxyAddresses: readonly string[];
}

export const MAX_DECLARED_NAMES = 50;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The names lower-cased (IDNs in their ASCII form), each once; refuses the first bad one. */
export function checkDeclaredNames(names: unknown, field = 'names'): string[] {
  if (!Array.isArray(names)) throw refusal(field, `${field} must be a list of host names (shop.example.com).`);
  if (names.length > MAX_DECLARED_NAMES * 20) throw tooMany(field);
  const out: string[] = [];
  names.forEach((name, i) => {
    if (typeof name !== 'string' || name.trim() === '') {
      throw refusal(field, `${field}[${i}] must be a host name (shop.example.com).`);
    }
    const host = hostNameOf(name.trim());
    if (host.reason !== undefined) throw refusal(field, `"${name}" ${host.reason}.`);
    if (!out.includes(host.name)) out.push(host.name);
  });
  if (out.length > MAX_DECLARED_NAMES) throw tooMany(field);
  return out;
}

/** The first of `names` the other plane declares, or null. */
export function namesTakenByOtherPlane(names: readonly string[], otherPlaneNames: readonly string[]): string | null {
  const taken = new Set(otherPlaneNames.map((n) => n.toLowerCase()));
  return names.find((n) => taken.has(n.toLowerCase())) ?? null;
}

/** The refusal for a name `namesTakenByOtherPlane` found. */
export function nameTakenRefusal(name: string, otherPlane: string, field = 'names'): GatewayError {
  return refusal(field, `"${name}" is declared by the ${otherPlane} plane; a name belongs to one plane.`);
}

type Checked = { readonly name: string; readonly reason?: undefined } | { readonly name?: undefined; readonly reason: string };

function hostNameOf(text: string): Checked {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (scheme) return { reason: `has a scheme (${scheme[0]}); declare the host name alone` };
  if (/[/?#]/.test(text)) return { reason: 'has a path; declare the host name alone' };
  if (isIP(text) !== 0 || text.startsWith('[')) return { reason: 'is an IP address; declare a host name' };
  const port = /^[^:]+:(\d+)$/.exec(text);
  if (port) return { reason: `has a port (:${port[1]}); declare the host name alone` };
  if (text.includes('*')) return { reason: 'is a wildcard; declare each name in full (a certificate may carry a wildcard, a declared name never does)' };
  const ascii = /^[\x21-\x7e]*$/.test(text) ? text.toLowerCase() : domainToASCII(text);
  const name = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  const labels = name.split('.');
  if (name === '' || name.length > 253 || !labels.every((l) => LABEL.test(l))) {
    return { reason: 'is not a host name (letters, digits and hyphens, in labels of at most 63 characters separated by dots)' };
  }
  // A final numeric label makes a URL parser read the host as an IPv4 address (10.1 is 10.0.0.1).
  if (/^(\d+|0x[0-9a-f]*)$/.test(labels[labels.length - 1]!)) return { reason: 'is an IP address; declare a host name' };
  return { name };
}

function tooMany(field: string): GatewayError {
  return refusal(field, `${field} may hold at most ${MAX_DECLARED_NAMES} names.`);
}

function refusal(field: string, sentence: string): GatewayError {
  return new GatewayError('tls.name-invalid', sentence, field);
}

/** The door as asked, checked field by field; names and addresses normalised. */
export function checkDoor(body: { proxied?: unknown; names?: unknown; proxyAddresses?: unknown }): DoorSettings {
  if (typeof body.proxied !== 'boolean') throw invalidField('proxied', 'proxied is true (a proxy in front serves HTTPS) or false (the gateway serves it).');
  return {
    proxied: body.proxied,
    names: checkDeclaredNames(body.names ?? [], 'names'),
    proxyAddresses: parseProxyAddresses(body.proxyAddresses ?? []),
  };
}

