import { isIP } from 'node:net';

/** A listen address as written in GATEWAY_*_ADDR: `host:port` or `:port`. */
export interface ListenAddress {
  /** Host to bind; `0.0.0.0` when the setting gave only `:port`. */
  readonly host: string;
  readonly port: number;
}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Parses `host:port`, `:port` or `[v6]:port`; returns a reason sentence when it is not one. */
export function parseListenAddress(text: string): ListenAddress | string {
  const value = text.trim();
  const colon = value.lastIndexOf(':');
  if (colon < 0) return 'write host:port or :port (port 0-65535)';
  let host = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    return `the port "${portText}" is not a number from 0 to 65535`;
  }
  if (host.startsWith('[') && host.endsWith(']')) {
    host = host.slice(1, -1);
    if (isIP(host) !== 6) return `"${host}" is not an IPv6 address`;
  } else if (host === '') {
    host = '0.0.0.0';
  } else if (host.includes(':')) {
    return 'write an IPv6 host in brackets, for example [::1]:8080';
  } else if (isIP(host) === 0 && !HOSTNAME.test(host)) {
    return `"${host}" is not a host name or IP address`;
  }
  return { host, port: Number(portText) };
}

/** True when the address is reachable only from this machine. */
export function isLoopback(address: ListenAddress): boolean {
  const h = address.host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\./.test(h);
}

export function formatAddress(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Binds every address of the machine (`:port`, `0.0.0.0`, `::`): it meets any other door on its port. */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/**
 * Whether two listeners' hosts may take the same socket: the same host, a wildcard, or
 * `localhost` beside a loopback address (it resolves to 127.0.0.1 or ::1).
 */
export function hostsOverlap(x: ListenAddress, y: ListenAddress): boolean {
  const a = x.host.toLowerCase();
  const b = y.host.toLowerCase();
  if (a === b || isWildcard(a) || isWildcard(b)) return true;
  return (a === 'localhost' && isLoopback(y)) || (b === 'localhost' && isLoopback(x));
}
