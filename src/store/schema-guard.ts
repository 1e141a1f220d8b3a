/**
 * A build refuses a database whose schema a newer build moved on: it would read rows without the
 * columns and rules the newer one relies on (an organisation's perimeter, the trail's guards) and
 * write rows the newer one cannot read. The migrations table names every migration applied; one
 * this build does not list means a newer build ran here. Rolling back is restoring the backup
 * taken before the upgrade (docs/upgrade.md).
 */
export class SchemaNewerError extends Error {
  override readonly name = 'SchemaNewerError';
}

/** Throws SchemaNewerError when `applied` holds a migration `known` does not. */
export function assertKnownSchema(applied: readonly string[], known: readonly string[]): void {
  const mine = new Set(known);
  const unknown = applied.filter((name) => !mine.has(name));
  if (unknown.length === 0) return;
  throw new SchemaNewerError(
    `This database was migrated by a newer Meerkat: it holds ${unknown.length === 1 ? 'the migration' : 'the migrations'} ${unknown.join(', ')}, which this build (schema ${known.at(-1) ?? 'none'}) does not know. `
    + 'Start the newer build, or restore the backup taken before the upgrade to run this one (docs/upgrade.md).',
  );
}

