/**
 * The export's CSV (CONTRACT.md "Audit", spec 1.3 rule 16): one row per event, RFC 4180 quoting,
 * the diff as JSON in its own column. After the contract's columns come an operation call's trace
 * id and its attributes (as JSON): an auditor exporting the operations part needs what they hold. A cell a spreadsheet would run as a formula (it starts with
 * =, +, - or @, or a tab or carriage return) is written with a leading apostrophe: a name typed at
 * a sign-in page must not become a formula on an auditor's machine.
 */
import { actorText, type AuditEvent } from './event.ts';

export const CSV_COLUMNS = ['when', 'part', 'action', 'actor', 'token', 'target_kind', 'target_id', 'target_name', 'organisation', 'address', 'detail', 'changes', 'trace_id', 'attributes'] as const;

function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
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
  return `${values.map(cell).join(',')}\r\n`;
}
