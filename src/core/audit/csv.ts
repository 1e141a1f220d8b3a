/**
 * The export's CSV (CONTRACT.md "Audit", spec 1.3 rule 16): one row per event, RFC 4180 quoting,
 * the diff as JSON in its own column. After the contract's columns come an operation call's trace
 * id and its attributes (as JSON): an auditor exporting the operations part needs what they hold.
 * A formula's first character (=, +, - or @) where a spreadsheet would start a cell (the cell's
 * start, or after a semicolon or a tab, which some locales split on whatever the quoting; spaces
 * before it count) gets an apostrophe before it, as does a cell starting with a tab or a carriage
 * return: a name typed at a sign-in page must not become a formula on an auditor's machine.
 */
import { actorText, type AuditEvent } from './event.ts';

export const CSV_COLUMNS = ['when', 'part', 'action', 'actor', 'token', 'target_kind', 'target_id', 'target_name', 'organisation', 'address', 'detail', 'changes', 'trace_id', 'attributes'] as const;

/**
 * A formula's first character at the start of a cell or after a semicolon or a tab (the separators
 * a spreadsheet set to another locale splits on, quotes or not), spaces allowed before it.
 */
const FORMULA_START = /(^|[;\t])(\s*)([=+\-@])/g;

export function csvCell(value: string): string {
  let safe = value.replace(FORMULA_START, "$1$2'$3");
  if (/^[\t\r]/.test(safe)) safe = `'${safe}`;
  return /[",;\t\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const csvHeader = (): string => `${CSV_COLUMNS.join(',')}\r\n`;

export function csvRow(e: AuditEvent): string {
  const values = [
    new Date(e.when * 1000).toISOString(), e.part, e.action,
    e.actor === null ? '' : actorText({ account: e.actor.account }), e.actor?.token ?? '',
    e.target.kind, e.target.id ?? '', e.target.name ?? '', e.organisation ?? '', e.address ?? '', e.detail ?? '',
    e.changes && e.changes.length > 0 ? JSON.stringify(e.changes) : '',
    e.traceId ?? '', e.attributes === undefined || e.attributes === null ? '' : JSON.stringify(e.attributes),
  ];
  return `${values.map(csvCell).join(',')}\r\n`;
}
