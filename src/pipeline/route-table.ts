/**
 * Which route serves a request: longest path prefix on a segment boundary, among the routes that
 * accept the request's host. Built once per config snapshot; `match` runs on every request, so
 * all the ordering work happens in the constructor and a match is one Map lookup and a short scan.
 */
import type { RouteView } from '../core/model.ts';

export interface RouteMatch {
  readonly route: RouteView;
  readonly prefix: string;
  /** path the route forwards, stripPrefix applied, BEFORE the upstream base path is prepended; always starts with '/' */
  readonly servicePath: string;
  /** full path to request upstream: upstream URL's base path + servicePath, no double slashes */
  readonly upstreamPath: string;
}

interface Entry {
  readonly route: RouteView;
  readonly prefix: string;
  /** Precomputed so the boundary test is a char compare, not an endsWith per request. */
  readonly endsWithSlash: boolean;
  readonly named: boolean;
  readonly basePath: string;
}

export class RouteTable {
  /** Per named host: that host's entries merged with the host-less ones, best first. */
  readonly #byHost = new Map<string, readonly Entry[]>();
  /** Entries for a host no route names (or no Host header): host-less routes only. */
  readonly #anyHost: readonly Entry[];

  constructor(routes: readonly RouteView[]) {
    const hostless: Entry[] = [];
    const named = new Map<string, Entry[]>();
    for (const route of routes) {
      const basePath = upstreamBasePath(route);
      const hosts = [...new Set(route.hosts.map(normaliseHost).filter((h) => h !== ''))];
      for (const prefix of new Set(route.paths)) {
        const entry = (isNamed: boolean): Entry =>
          ({ route, prefix, endsWithSlash: prefix.endsWith('/'), named: isNamed, basePath });
        if (hosts.length === 0) {
          hostless.push(entry(false));
          continue;
        }
        for (const host of hosts) {
          let list = named.get(host);
          if (list === undefined) named.set(host, (list = []));
          list.push(entry(true));
        }
      }
    }
    this.#anyHost = hostless.sort(byPreference);
    for (const [host, list] of named) this.#byHost.set(host, [...list, ...hostless].sort(byPreference));
  }

  /** host: raw Host header (any case, may carry :port, may be an [IPv6]:port, may be undefined). path: raw request path, percent-encoded, no query. */
  match(host: string | undefined, path: string): RouteMatch | undefined {
    // Without any host-bound route, parsing the Host header would be wasted work.
    const entries = this.#byHost.size === 0 || host === undefined
      ? this.#anyHost
      : this.#byHost.get(normaliseHost(host)) ?? this.#anyHost;
    for (const e of entries) {
      if (!prefixMatches(e.prefix, e.endsWithSlash, path)) continue;
      let servicePath = path;
      if (e.route.stripPrefix) {
        const len = e.prefix.length;
        // After a slash-terminated prefix the rest may start mid-segment: lend it the prefix's last
        // slash (a slice, not a concatenation) so the forwarded path still starts with '/'.
        servicePath = e.endsWithSlash && len < path.length && path.charCodeAt(len) !== 47
          ? path.slice(len - 1)
          : path.slice(len);
        if (servicePath === '') servicePath = '/';
      }
      const upstreamPath = e.basePath === '' ? servicePath : e.basePath + servicePath;
      return { route: e.route, prefix: e.prefix, servicePath, upstreamPath };
    }
    return undefined;
  }
}

function prefixMatches(prefix: string, endsWithSlash: boolean, path: string): boolean {
  if (!path.startsWith(prefix)) return false;
  return endsWithSlash || path.length === prefix.length || path.charCodeAt(prefix.length) === 47 /* '/' */;
}

/** Longest prefix, then host-named before host-less, then smaller route id: a total order, so the winner never depends on input order. */
function byPreference(a: Entry, b: Entry): number {
  if (a.prefix.length !== b.prefix.length) return b.prefix.length - a.prefix.length;
  if (a.named !== b.named) return a.named ? -1 : 1;
  if (a.route.id !== b.route.id) return a.route.id < b.route.id ? -1 : 1;
  return a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0;
}

/** Upstream URL's path without trailing slash: '' for the root, so concatenation never doubles a slash. */
function upstreamBasePath(route: RouteView): string {
  let pathname: string;
  try {
    pathname = new URL(route.upstream).pathname;
  } catch {
    // Route input validation refuses such URLs; reaching this is a bug upstream of the table.
    throw new TypeError(`route ${route.id}: upstream "${route.upstream}" is not a URL`);
  }
  let end = pathname.length;
  while (end > 0 && pathname.charCodeAt(end - 1) === 47) end--;
  return pathname.slice(0, end);
}

/**
 * Host header → the form route hosts are written in: lower-case, no port, IPv6 without brackets,
 * no trailing root dot ('example.com.' names the same host as 'example.com').
 */
export function normaliseHost(raw: string): string {
  let host = raw;
  if (host.charCodeAt(0) === 91 /* '[' */) {
    const close = host.indexOf(']');
    host = close < 0 ? host.slice(1) : host.slice(1, close);
  } else {
    const colon = host.indexOf(':');
    // More than one colon is a bare IPv6 address (invalid in Host, but not a port separator).
    if (colon >= 0 && host.indexOf(':', colon + 1) < 0) host = host.slice(0, colon);
  }
  if (host.length > 1 && host.charCodeAt(host.length - 1) === 46 /* '.' */) host = host.slice(0, -1);
  return host.toLowerCase();
}
