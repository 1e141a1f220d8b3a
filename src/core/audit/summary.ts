/**
 * The one line an import, a restore or a declarative switch writes (spec 1.3 rule 7): counts
 * first, then the names added, updated and removed, then the settings' fields that moved. At most
 * 80 names in all are written; the rest is counted (`and 12 more`), so a line stays readable and
 * bounded whatever the file held.
 *
 *   3 added, 1 updated, 0 removed, 2 settings fields moved. Added: route orders, role ops,
 *   role billing. Updated: account alice. Settings moved: logs.level, audit.retention.
 */

export const SUMMARY_MAX_NAMES = 80;

export interface SummaryInput {
  /** Names as the reader should see them, kind first: `route orders`. */
  readonly added?: readonly string[];
  readonly updated?: readonly string[];
  readonly removed?: readonly string[];
  /** Fields of settings that moved: `logs.level`. */
  readonly settings?: readonly string[];
}

export function summarise(input: SummaryInput, max = SUMMARY_MAX_NAMES): string {
  const added = input.added ?? [];
  const updated = input.updated ?? [];
  const removed = input.removed ?? [];
  const settings = input.settings ?? [];
  const counts = `${added.length} added, ${updated.length} updated, ${removed.length} removed`
    + (settings.length > 0 ? `, ${settings.length} settings ${settings.length === 1 ? 'field' : 'fields'} moved` : '');
  const groups: Array<[string, readonly string[]]> = [['Added', added], ['Updated', updated], ['Removed', removed], ['Settings moved', settings]];
  const total = added.length + updated.length + removed.length + settings.length;
  const parts: string[] = [];
  let room = max;
  for (const [label, names] of groups) {
    if (names.length === 0) continue;
    if (room === 0) break;
    const shown = names.slice(0, room);
    room -= shown.length;
    const written = max - room;
    // The remainder, counted once, closes the group where the cap fell.
    const more = room === 0 && total > written ? ` and ${total - written} more` : '';
    parts.push(`${label}: ${shown.join(', ')}${more}.`);
  }
  return [`${counts}.`, ...parts].join(' ');
}
