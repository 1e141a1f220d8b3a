import { isIP } from 'node:net';

/**
 * Names a certificate carries and names a plane declares (spec 1.2 rules 1, 9, 15).
 * Reasons are returned as a clause in lower case without a final stop, so a caller can put the
 * name in front: `"https://example.com": names carry no scheme: write example.com, …`.
 */

const BRACKETED = /^\[([^\]]*)\]$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/** An IPv4 or IPv6 address; an IPv6 address may be in brackets, as it is written in a URL. */
export function isIpAddress(text: string): boolean {
  const inner = BRACKETED.exec(text)?.[1];
  return isIP(inner ?? text) !== 0;
}

/** The one spelling of an address: IPv4 as written (node accepts only dotted decimal), IPv6 compressed in lower case. */
export function normaliseIp(text: string): string {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIP(bare) !== 6) return bare;
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return bare.toLowerCase(); // zone ids (fe80::1%eth0) are refused by URL; compare them as written
  }
}

/**
 * The comparable form of a host or a certificate name: lower case, no final dot, addresses normalised.
 * A host never carries a port here: the caller strips it (a server name from the handshake has none).
 */
export function normaliseHost(host: string): string {
  const trimmed = host.trim();
  if (isIpAddress(trimmed)) return normaliseIp(trimmed);
  return trimmed.replace(/\.$/, '').toLowerCase();
}

/**
 * Whether a certificate carrying `certNames` answers for `host`: an exact name (any case), a
 * wildcard covering exactly one left-most label (`*.example.com` covers `a.example.com`, not
 * `example.com`, not `a.b.example.com`), or the same IP address. `host` has no port.
 */
export function covers(certNames: readonly string[], host: string): boolean {
  const wanted = normaliseHost(host);
  if (wanted === '') return false;
  if (isIP(wanted) !== 0) return certNames.some((n) => isIpAddress(n) && normaliseIp(n) === wanted);
  const dot = wanted.indexOf('.');
  // A wildcard stands for one label: letters, digits and hyphens. `evil/.example.com` or
  // `2130706433?.example.com` is no name under the domain, whatever follows its first dot.
  const parent = dot > 0 && LABEL.test(wanted.slice(0, dot)) ? wanted.slice(dot + 1) : undefined;
  return certNames.some((raw) => {
    const name = normaliseHost(raw);
    if (name === wanted) return true;
    return parent !== undefined && name.startsWith('*.') && name.slice(2) === parent;
  });
}

/** The hosts of `hosts` that no name of `certNames` covers, in their order. */
export function uncovered(certNames: readonly string[], hosts: readonly string[]): string[] {
  return hosts.filter((h) => !covers(certNames, h));
}

/**
 * The names two certificates both answer (spec 1.2 rule 10): each name of one the other covers,
 * a wildcard counting as answered only by the same wildcard. Deduplicated, in lower case.
 */
export function sharedNames(a: readonly string[], b: readonly string[]): string[] {
  const answeredBy = (names: readonly string[], name: string): boolean =>
    name.startsWith('*.') ? names.some((n) => normaliseHost(n) === normaliseHost(name)) : covers(names, name);
  const shared = [...a.filter((n) => answeredBy(b, n)), ...b.filter((n) => answeredBy(a, n))];
  return [...new Set(shared.map(normaliseHost))];
}

/** `name` without a trailing `:port` (`[::1]:443`, `example.com:8443`); a bare IPv6 address stays whole. */
function withoutPort(name: string): string {
  if (isIP(name) !== 0) return name;
  const port = /^(\[[^\]]*\]|[^:]*):\d*$/.exec(name);
  return port?.[1] ?? name;
}

/** Scheme, path, port and address mistakes, written once for both kinds of name. */
function shapeProblem(name: string): string | null {
  if (name.trim() === '') return 'a name cannot be empty';
  if (name !== name.trim() || /\s/.test(name)) return 'a name holds no spaces';
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(name);
  if (scheme) {
    const rest = name.slice(scheme[0].length).split(/[/:?#]/)[0] || 'example.com';
    return `names carry no scheme: write ${rest}, not ${name}`;
  }
  if (/[/?#]/.test(name)) return `names carry no path: write ${name.split(/[/?#]/)[0] || 'example.com'}, not ${name}`;
  return null;
}

/** Letters, digits and hyphens in labels of at most 63 characters, 253 in all (RFC 1123). */
function hostNameProblem(name: string): string | null {
  if (name.endsWith('.')) return `write the name without its final dot: ${name.slice(0, -1)}`;
  if (name.length > 253) return `a name is at most 253 characters; this one has ${name.length}`;
  if (/[^\x20-\x7e]/.test(name)) return 'write an international name in its ASCII form (xn--…)';
  const labels = name.split('.');
  for (const label of labels) {
    if (label === '') return 'a name has no empty label (two dots in a row, or a dot at the start)';
    if (label.length > 63) return `each label of a name is at most 63 characters; ${label.slice(0, 20)}… has ${label.length}`;
    if (!LABEL.test(label)) {
      return /^-|-$/.test(label)
        ? `a label neither starts nor ends with a hyphen: ${label}`
        : `a name holds letters, digits, hyphens and dots only; ${label} does not`;
    }
  }
  if (/^\d+$/.test(labels[labels.length - 1] ?? '')) return 'the last label of a name is not all digits (it would read as an IP address)';
  return null;
}

/** A host name as RFC 1123 writes it (labels of letters, digits and hyphens), without its final dot. */
export function isHostName(name: string): boolean {
  return hostNameProblem(name) === null;
}

/**
 * Why a plane cannot declare `name` (spec 1.2 rule 15), or null: a host name only, with no scheme,
 * port or path, never an IP address, never a wildcard.
 */
export function declaredNameProblem(name: string): string | null {
  const shape = shapeProblem(name);
  if (shape) return shape;
  const host = withoutPort(name);
  if (isIpAddress(host)) return 'a declared name is never an IP address: declare the host name the world calls, such as example.com';
  if (host.includes('*')) return 'a declared name is never a wildcard: declare each full name, such as app.example.com';
  if (host !== name) return `names carry no port: write ${host}, not ${name}`;
  return hostNameProblem(name);
}

/**
 * Why a self-signed certificate or a signing request cannot carry `name`, or null: a host name,
 * a wildcard of exactly one left-most label (`*.example.com`), or an IPv4 or IPv6 address.
 */
export function certificateNameProblem(name: string): string | null {
  const shape = shapeProblem(name);
  if (shape) return shape;
  if (isIP(name) !== 0) return name.includes('%') ? `an address in a certificate carries no zone: write ${name.split('%')[0]}` : null;
  const host = withoutPort(name);
  if (host !== name) return `names carry no port: write ${host}, not ${name}`;
  if (BRACKETED.test(name)) return `write the address without brackets: ${name.slice(1, -1)}`;
  if (name.includes('*')) {
    const rest = name.slice(2);
    if (!name.startsWith('*.') || rest.includes('*')) return `a wildcard is the whole left-most label only, such as *.example.com; ${name} is not`;
    if (!rest.includes('.')) return `a wildcard covers the names under a domain, such as *.example.com, not ${name}`;
    return hostNameProblem(rest);
  }
  return hostNameProblem(name);
}
