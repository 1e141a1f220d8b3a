/**
 * Vault references in a scheduled call's header values (spec 1.1 rule 27): `${name}` or `$name`,
 * resolved at call time. An unknown name goes out verbatim (`$typo`), never as an empty header.
 */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,127})\}|\$([A-Za-z_][A-Za-z0-9_]{0,127})/g;

/** Names referenced by a value, for loading only what is needed. */
export function referencedNames(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => (m[1] ?? m[2])!);
}

export function resolveReferences(value: string, lookup: (name: string) => string | undefined): string {
  return value.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) => lookup((braced ?? bare)!) ?? whole);
}
