/**
 * HTTP's token (RFC 9110 5.6.2): what a method and a header name are made of, and the characters
 * a field value may hold (5.5). One rule for every place that checks one: where a caller writes a
 * header name (schedules, audit rules), where the gateway writes a request to a service, and where
 * it reads the service's answer. Checked by a loop over a table rather than a regular expression:
 * every header of every request and answer passes here, and a regular expression's call costs
 * more than reading the few characters of a name (bench/RESULTS.md, "Header records").
 */

/** 1 for the ASCII codes a token may hold. */
const TCHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1;

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || TCHAR[c] === 0) return false;
  }
  return true;
}

/**
 * A field value as written on HTTP/1.1: tabs, visible ASCII, spaces and obs-text; no control
 * character, nothing past U+00FF. `from`/`to` check a part of `s` in place (a reader's buffer)
 * without cutting it out first.
 */
export function isFieldValue(s: string, from = 0, to = s.length): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 ? c !== 0x09 : c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/**
 * A request target (its path and query) as written on HTTP/1.1: visible ASCII, no space, no DEL
 * (RFC 9112 3.2 and RFC 3986: anything else is percent-encoded; services refuse raw bytes).
 */
export function isRequestTarget(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/** 1 for the ASCII codes a Host value may hold: uri-host (RFC 3986 3.2.2: reg-name, IPv4, an IP literal) and a port. */
const HOST_CHAR = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=%:[]") HOST_CHAR[c.charCodeAt(0)] = 1;

/**
 * A Host value as RFC 9110 7.2 allows it (`uri-host [":" port]`): no space (two Host lines, which
 * the plain doors join with ", "), no `/`, `?`, `#` or `@`, at most 255 characters. What the
 * gateway repeats from it (X-Forwarded-Host, a signed identity's issuer) is then a host name.
 */
export function isHostValue(s: string): boolean {
  if (s.length === 0 || s.length > 255) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || HOST_CHAR[c] === 0) return false;
  }
  return true;
}

/** A header name a caller may write into the configuration: a token of at most 100 characters. */
export function isHeaderName(name: string): boolean {
  return name.length <= 100 && isToken(name);
}

/** Whether a comma-separated header (`Connection`, `Upgrade`, `Transfer-Encoding`) lists `token`, case aside. */
export function hasToken(value: string | readonly string[] | undefined, token: string): boolean {
  if (value === undefined) return false;
  const all = typeof value === 'string' ? value : value.join(',');
  return all.split(',').some((v) => v.trim().toLowerCase() === token);
}
