/**
 * Whose forwarded headers (X-Forwarded-For, X-Forwarded-Proto) a plane believes in proxy mode
 * (spec 1.2 rules 15-16): the peers within the declared proxy addresses, or, when none is
 * declared, the peers on loopback and private ranges.
 *
 * The private ranges are loopback (127.0.0.0/8, ::1), RFC 1918 (10/8, 172.16/12, 192.168/16) and
 * IPv6 unique local addresses (fc00::/7): where a proxy in front of the gateway lives, and no
 * address a client on the internet reaches the gateway from. Link-local (169.254/16, fe80::/10)
 * and shared address space (100.64/10) are left out: a proxy is rarely there, and a cloud's
 * metadata service or a carrier's customers are. A proxy there is declared by its address.
 *
 * A peer written as an IPv4-mapped IPv6 address (`::ffff:10.1.2.3`, as a dual-stack socket
 * reports it) matches the IPv4 ranges; node:net's BlockList does the mapping.
 */
import { BlockList, isIP } from 'node:net';
import { GatewayError } from './errors.ts';

export const PRIVATE_RANGES: readonly string[] = Object.freeze([
  '127.0.0.0/8', '::1', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7',
]);

const MAX_ENTRIES = 100;
const FIELD = 'proxyAddresses';

interface Range {
  readonly text: string;
  readonly address: string;
  readonly family: 'ipv4' | 'ipv6';
  /** Undefined for a single address. */
  readonly prefix: number | undefined;
}

export class ProxyTrust {
  /** What is believed: the entries given, or the private ranges when none is. */
  readonly ranges: readonly string[];
  private readonly list = new BlockList();

  /** Entries as `parseProxyAddresses` answers them; a bad entry throws the same refusal. */
  constructor(addresses: readonly string[]) {
    const ranges = rangesOf(addresses.length > 0 ? addresses : PRIVATE_RANGES);
    for (const r of ranges) {
      if (r.prefix === undefined) this.list.addAddress(r.address, r.family);
      else this.list.addSubnet(r.address, r.prefix, r.family);
    }
    this.ranges = Object.freeze(ranges.map((r) => r.text));
  }

  /** True when a request from this peer may say who the client is and whether it came in https. */
  believes(remoteAddress: string): boolean {
    const address = bare(remoteAddress);
    const family = isIP(address);
    if (family === 0) return false;
    return this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** A door's `proxyAddresses` as given by the API: normalised, each once; refuses a bad entry. */
export function parseProxyAddresses(list: unknown): string[] {
  if (!Array.isArray(list)) {
    throw refusal(`${FIELD} must be a list of IP addresses or CIDR ranges (10.0.0.0/8, 2001:db8::/32, 192.0.2.7).`);
  }
  if (list.length > MAX_ENTRIES) throw refusal(`${FIELD} may hold at most ${MAX_ENTRIES} entries.`);
  return rangesOf(list).map((r) => r.text);
}

function rangesOf(list: readonly unknown[]): Range[] {
  const out: Range[] = [];
  list.forEach((entry, i) => {
    if (typeof entry !== 'string' || entry.trim() === '') throw refusal(`${FIELD}[${i}] must be an IP address or a CIDR range.`);
    const range = rangeOf(entry.trim().toLowerCase());
    if (typeof range === 'string') throw refusal(`${FIELD} lists "${entry}", which ${range}.`);
    if (!out.some((r) => r.text === range.text)) out.push(range);
  });
  return out;
}

/** The range an entry writes, or the reason it is not one (a clause after "which"). */
function rangeOf(entry: string): Range | string {
  if (entry.includes('%')) return 'carries a zone; write the address without %<interface>';
  if (entry.startsWith('[')) return 'is in brackets; write an IPv6 address without them';
  const [address = '', prefixText, extra] = entry.split('/');
  const kind = isIP(address);
  if (extra !== undefined || kind === 0) {
    return /^[a-z0-9.-]+$/.test(address) && /[a-z]/.test(address)
      ? 'is a host name; write the proxy\'s IP address or range'
      : 'is not an IP address or a CIDR range (10.0.0.0/8, 2001:db8::/32, 192.0.2.7)';
  }
  const family = kind === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { text: address, address, family, prefix: undefined };
  const max = kind === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
    return `has the prefix /${prefixText}, out of range for an ${kind === 4 ? 'IPv4' : 'IPv6'} address (1 to ${max})`;
  }
  const prefix = Number(prefixText);
  if (prefix === 0) return 'would believe every address, so anyone could forge the client\'s address; write the proxy\'s own range';
  return { text: `${address}/${prefix}`, address, family, prefix };
}

/** A peer address as sockets and headers write it: without brackets or a zone. */
function bare(remoteAddress: string): string {
  let address = remoteAddress.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  return zone >= 0 ? address.slice(0, zone) : address;
}

function refusal(sentence: string): GatewayError {
  return new GatewayError('tls.proxy-address-invalid', sentence, FIELD);
}
