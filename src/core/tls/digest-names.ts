/**
 * Whether a certificate's names answer for a host, for the expiry digest only. A wildcard serves
 * exactly one label (`*.example.com` carries `a.example.com`, neither `example.com` nor
 * `a.b.example.com`); a name written the same way carries itself, a wildcard included.
 * Internal to src/core/tls/digest.ts: the certificate module's own name matching replaces it.
 */
export function carries(names: readonly string[], host: string): boolean {
  const wanted = plain(host);
  return names.some((name) => {
    const own = plain(name);
    if (own === wanted) return true;
    if (!own.startsWith('*.')) return false;
    const dot = wanted.indexOf('.');
    return dot > 0 && !wanted.startsWith('*') && wanted.slice(dot) === own.slice(1);
  });
}

/** DNS names compare without case and without the root's trailing dot. */
function plain(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
