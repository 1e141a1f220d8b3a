/**
 * Which route serves a request: longest path prefix on a segment boundary, among the routes that
 * accept the request's host. Built once per config snapshot; `match` runs on every request, so
 * all the ordering work happens in the constructor. A match is one Map lookup for the host, then
 * a short scan of that host's prefixes, best first; past a few dozen prefixes, the scan would cost
 * microseconds a request (12 µs at 500 routes), so they are indexed instead: the path's own
 * prefixes on its segment boundaries, longest first, each looked up once.
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

/** Up to this many prefixes for a host, a scan is cheaper than building the candidate prefixes. */
const SCAN_AT_MOST = 24;

/**
 * A host's prefixes by their text, the best entry of each (prefixes of one length that both start
 * a path are the same text, so the longest candidate found is the scan's winner), and which
 * lengths exist, so a candidate of a length no prefix has is never cut out of the path.
 */
interface PrefixIndex {
  readonly best: ReadonlyMap<string, Entry>;
  readonly lengths: Uint8Array;
}

function prefixIndex(entries: readonly Entry[]): PrefixIndex | undefined {
  if (entries.length <= SCAN_AT_MOST) return undefined;
  const best = new Map<string, Entry>();
  let longest = 0;
  // Entries are best first: the first of each prefix is its best.
  for (const e of entries) {
    if (!best.has(e.prefix)) best.set(e.prefix, e);
    longest = Math.max(longest, e.prefix.length);
  }
  const lengths = new Uint8Array(longest + 1);
  for (const prefix of best.keys()) lengths[prefix.length] = 1;
  return { best, lengths };
}

/** The entry of `index` for the path's prefix of length `n`, if a prefix of that length exists. */
function lookup(index: PrefixIndex, path: string, n: number): Entry | undefined {
  return n < index.lengths.length && index.lengths[n] === 1 ? index.best.get(n === path.length ? path : path.slice(0, n)) : undefined;
}

/**
 * The best entry among the path's prefixes that end on a segment boundary, longest first: the
 * whole path, then at each '/' from the end the prefix that keeps it (a prefix written with its
 * trailing slash) and the one that stops before it.
 */
function indexedMatch(index: PrefixIndex, path: string): Entry | undefined {
  if (path.includes(';')) return indexedMatchWithParams(index, path);
  let found = lookup(index, path, path.length);
  for (let j = path.lastIndexOf('/'); found === undefined && j >= 0; j = j === 0 ? -1 : path.lastIndexOf('/', j - 1)) {
    if (j + 1 < path.length) found = lookup(index, path, j + 1);
    if (found === undefined && j > 0) found = lookup(index, path, j);
  }
  return found;
}

/** The same, where a prefix may also end before a ';' (prefixMatches): every boundary from the end. */
function indexedMatchWithParams(index: PrefixIndex, path: string): Entry | undefined {
  let found = lookup(index, path, path.length);
  for (let j = path.length - 1; found === undefined && j >= 0; j--) {
    const c = path.charCodeAt(j);
    if (c === 47 /* '/' */) {
      if (j + 1 < path.length) found = lookup(index, path, j + 1);
      if (found === undefined && j > 0) found = lookup(index, path, j);
    } else if (c === 59 /* ';' */) {
      found = lookup(index, path, j);
    }
  }
  return found;
}

interface HostEntries {
  /** Best first. */
  readonly entries: readonly Entry[];
  readonly index: PrefixIndex | undefined;
}

function hostEntries(entries: readonly Entry[]): HostEntries {
  return { entries, index: prefixIndex(entries) };
}

export class RouteTable {
  /** Per named host: that host's entries merged with the host-less ones, best first. */
  readonly #byHost = new Map<string, HostEntries>();
  /** Entries for a host no route names (or no Host header): host-less routes only. */
  readonly #anyHost: HostEntries;

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
    this.#anyHost = hostEntries(hostless.sort(byPreference));
    for (const [host, list] of named) this.#byHost.set(host, hostEntries([...list, ...hostless].sort(byPreference)));
  }

  /** host: raw Host header (any case, may carry :port, may be an [IPv6]:port, may be undefined). path: raw request path, percent-encoded, no query. */
  match(host: string | undefined, path: string): RouteMatch | undefined {
    const forHost = this.#byHost.size === 0 || host === undefined
      ? this.#anyHost
      : this.#byHost.get(normaliseHost(host)) ?? this.#anyHost;
    if (forHost.index !== undefined) {
      const e = indexedMatch(forHost.index, path);
      return e === undefined ? undefined : matched(e, path);
    }
    for (const e of forHost.entries) {
      if (prefixMatches(e.prefix, e.endsWithSlash, path)) return matched(e, path);
    }
    return undefined;
  }
}

function matched(e: Entry, path: string): RouteMatch {
  let servicePath = path;
  if (e.route.stripPrefix) {
    const len = e.prefix.length;
    if (e.endsWithSlash && len < path.length && path.charCodeAt(len) !== 47) {
      servicePath = path.slice(len - 1);
    } else if (path.charCodeAt(len) === 59 /* ';' */) {
      // The stripped segment's parameters go with it.
      const next = path.indexOf('/', len);
      servicePath = next < 0 ? '' : path.slice(next);
    } else {
      servicePath = path.slice(len);
    }
    if (servicePath === '') servicePath = '/';
  }
  const upstreamPath = e.basePath === '' ? servicePath : e.basePath + servicePath;
  return { route: e.route, prefix: e.prefix, servicePath, upstreamPath };
}

/** A prefix ends at '/' or at ';' (servlet containers serve `/admin;x` as `/admin`: so does its route). */
function prefixMatches(prefix: string, endsWithSlash: boolean, path: string): boolean {
  if (!path.startsWith(prefix)) return false;
  if (endsWithSlash || path.length === prefix.length) return true;
  const next = path.charCodeAt(prefix.length);
  return next === 47 /* '/' */ || next === 59 /* ';' */;
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
