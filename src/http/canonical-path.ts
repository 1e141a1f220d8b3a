/**
 * The canonical form of a request path, shared by the data plane (each request) and the
 * scheduling API (each schedule, at write time), so a path judged when written is the path
 * routed when called. Dot segments would let `/public/../admin` match an open route and reach
 * `/admin` behind it, so a path holding one (also percent-encoded) has no canonical form.
 * Repeated slashes are merged (as nginx does by default), so `/orders//7` meets the rule written
 * for `/orders/{id}`.
 */

function isDotSegment(segment: string): boolean {
  if (segment.length === 0 || segment.length > 6) return false;
  const plain = segment.includes('%') ? segment.replace(/%2e/gi, '.') : segment;
  return plain === '.' || plain === '..';
}

/**
 * `raw` (percent-encoded, no query) with repeated slashes merged, or undefined when it holds a
 * "." or ".." segment. Returns `raw` itself when it is already canonical.
 */
export function canonicalForm(raw: string): string | undefined {
  let path = raw;
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  // Fast path: no dot anywhere, nothing to check.
  if (!path.includes('.') && (!path.includes('%') || !/%2e/i.test(path))) return path;
  let start = 1;
  while (start <= path.length) {
    let end = path.indexOf('/', start);
    if (end < 0) end = path.length;
    if (isDotSegment(path.slice(start, end))) return undefined;
    start = end + 1;
  }
  return path;
}
