/**
 * Force HTTPS and HSTS on the data plane (spec 1.2 rules 11-12). The plain port redirects with
 * 308 to the HTTPS door, except the two probes and names no valid certificate placed on the
 * application carries. HSTS follows the redirect, on HTTPS answers only: `max-age=<chosen>` when
 * HTTPS is reached on 443 with plain HTTP on 80, `max-age=0` otherwise (other ports, Force HTTPS
 * off, every certificate for the name expired); never to localhost or an IP address, never over
 * a value the service already set, never with includeSubDomains. Never behind a proxy.
 */
import { isIP } from 'node:net';
import type { Exchange, OutgoingHeaders } from '../../http/exchange.ts';
import type { GatewayContext } from '../context.ts';
import { requestHost } from '../forwarded.ts';
import { isHostName, isIpAddress } from '../../core/tls/names.ts';

const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

function neverHsts(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return host === '' || host === 'localhost' || host.endsWith('.localhost') || isIP(bare) !== 0;
}

/** The ports the world reaches the data plane's doors on (GATEWAY_PUBLIC_PORTS, or the bound ones). */
function publicPorts(gw: GatewayContext): { https: number | undefined; http: number | undefined } {
  return {
    https: gw.settings.publicPorts.app ?? gw.doors.https('data')?.port,
    http: gw.settings.publicPorts['app-http'] ?? gw.doors.plain('data')?.port,
  };
}

/** Where a plain data-plane request is sent (308), or undefined when it is served as it is. */
export function redirectTarget(gw: GatewayContext, ex: Exchange): string | undefined {
  const { redirect, doors } = gw.certs.view.settings;
  // Behind a proxy, the proxy redirects and sets HSTS: never the gateway (rule 15's table).
  if (!redirect.forceHttps || ex.secure || doors.app.proxied || PROBES.has(ex.path)) return undefined;
  const host = requestHost(ex);
  // The Location repeats the caller's Host: only a host name or an address goes there, so no
  // Host can steer the redirect to another site (`evil\.example.com`, `127.0.0.1%23.example.com`).
  if (!(isHostName(host) || isIpAddress(host)) || !gw.certs.view.carriesValid('app', host, gw.clock.now())) return undefined;
  const port = publicPorts(gw).https;
  if (port === undefined) return undefined;
  return `https://${host}${port === 443 ? '' : `:${port}`}${ex.path}${ex.query ? `?${ex.query}` : ''}`;
}

/** The Strict-Transport-Security value of an HTTPS data-plane answer, or undefined for none. */
export function hstsValue(gw: GatewayContext, ex: Exchange): string | undefined {
  const host = requestHost(ex);
  const { redirect, doors } = gw.certs.view.settings;
  if (!ex.secure || doors.app.proxied || neverHsts(host)) return undefined;
  const ports = publicPorts(gw);
  const on = redirect.forceHttps && ports.https === 443 && ports.http === 80 && gw.certs.view.carriesValid('app', host, gw.clock.now());
  return `max-age=${on ? redirect.hstsMaxAge : 0}`;
}

function withHeader(headers: OutgoingHeaders, value: string): OutgoingHeaders {
  return headers['strict-transport-security'] === undefined ? { ...headers, 'strict-transport-security': value } : headers;
}

/**
 * The exchange, its answers carrying the HSTS value unless they set the header themselves. A class
 * that hands everything else to the door's exchange: an object made with the request's exchange as
 * its prototype would give V8 a new prototype, and so a new shape, for every HTTPS request.
 */
class CarryingHsts implements Exchange {
  constructor(private readonly ex: Exchange, private readonly value: string) {}
  get plane() { return this.ex.plane; }
  get method() { return this.ex.method; }
  get path() { return this.ex.path; }
  get query() { return this.ex.query; }
  get headers() { return this.ex.headers; }
  get remoteAddress() { return this.ex.remoteAddress; }
  get secure() { return this.ex.secure; }
  get receivedAt() { return this.ex.receivedAt; }
  get receivedMono() { return this.ex.receivedMono; }
  get http10() { return this.ex.http10; }
  get aborted() { return this.ex.aborted; }
  get responded() { return this.ex.responded; }
  get status() { return this.ex.status; }
  get lengthRequired() { return this.ex.lengthRequired; }
  onAbort(fn: () => void): void { this.ex.onAbort(fn); }
  readBody(limit: number): Promise<Buffer> { return this.ex.readBody(limit); }
  bodyStream(): AsyncIterable<Uint8Array> { return this.ex.bodyStream(); }
  send(status: number, headers: OutgoingHeaders, body?: string | Uint8Array): void { this.ex.send(status, withHeader(headers, this.value), body); }
  writeHead(status: number, headers: OutgoingHeaders): void { this.ex.writeHead(status, withHeader(headers, this.value)); }
  write(chunk: Uint8Array): boolean { return this.ex.write(chunk); }
  drained(): Promise<void> { return this.ex.drained(); }
  end(chunk?: Uint8Array): void { this.ex.end(chunk); }
  abort(): void { this.ex.abort(); }
}

export function withHsts(ex: Exchange, value: string): Exchange {
  return new CarryingHsts(ex, value);
}
