import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditSlice, visible, type AuditCaller } from '../../src/core/audit/visibility.ts';
import { GatewayError } from '../../src/http/errors.ts';
import type { AuditPart, TargetKind } from '../../src/core/audit/event.ts';

const ev = (part: AuditPart, kind: TargetKind, organisation?: string) => ({
  part, target: { kind }, ...(organisation !== undefined ? { organisation } : {}),
});
const reads = (caller: AuditCaller, event: ReturnType<typeof ev>) => visible(event, auditSlice(caller));
const caller = (capabilities: string[], organisations: string[] = []): AuditCaller => ({ capabilities, organisations });

const consoleSignin = ev('security', 'console');
const appSignin = ev('security', 'account', 'acme');
const routeChange = ev('changes', 'route');
const exportLine = ev('changes', 'audit');

test('root reads everything, console sign-ins and exports included', () => {
  const root = caller(['root']);
  assert.deepEqual(auditSlice(root), { all: true });
  for (const e of [consoleSignin, appSignin, routeChange, exportLine, ev('changes', 'vault', 'acme'), ev('operations', 'operation')]) {
    assert.equal(reads(root, e), true, JSON.stringify(e));
  }
});

test('infra-admin reads changes to routes, identity providers, certificates, settings and issue reports', () => {
  const infra = caller(['infra-admin']);
  for (const kind of ['route', 'identity-provider', 'certificate', 'settings', 'issue-report'] as const) {
    assert.equal(reads(infra, ev('changes', kind)), true, kind);
    assert.equal(reads(infra, ev('changes', kind, 'acme')), true, `${kind} in an organisation`);
  }
  for (const e of [ev('changes', 'account'), ev('changes', 'role'), ev('changes', 'schedule'), appSignin, consoleSignin, exportLine, ev('operations', 'operation'), ev('changes', 'token')]) {
    assert.equal(reads(infra, e), false, JSON.stringify(e));
  }
});

test('app-admin reads its changes, application accounts\' security and audited calls', () => {
  const app = caller(['app-admin']);
  for (const kind of ['account', 'role', 'theme', 'language', 'schedule', 'settings', 'issue-report'] as const) {
    assert.equal(reads(app, ev('changes', kind)), true, kind);
  }
  assert.equal(reads(app, appSignin), true);
  assert.equal(reads(app, ev('security', 'account')), true);
  assert.equal(reads(app, ev('operations', 'operation', 'acme')), true);
  for (const e of [consoleSignin, routeChange, ev('changes', 'certificate'), exportLine, ev('changes', 'vault'), ev('changes', 'token')]) {
    assert.equal(reads(app, e), false, JSON.stringify(e));
  }
});

test('an organisation\'s administrator reads the lines of its organisations, never console sign-ins or exports', () => {
  const org = caller(['org-admin'], ['acme', 'initech']);
  assert.equal(reads(org, appSignin), true, 'members\' sign-ins into the organisation');
  assert.equal(reads(org, ev('changes', 'route', 'initech')), true);
  assert.equal(reads(org, ev('operations', 'operation', 'acme')), true);
  assert.equal(reads(org, ev('security', 'account', 'globex')), false, 'another organisation');
  assert.equal(reads(org, ev('changes', 'route')), false, 'a line with no organisation');
  assert.equal(reads(org, ev('security', 'console', 'acme')), false, 'console sign-ins are root\'s alone');
  assert.equal(reads(org, ev('changes', 'audit', 'acme')), false, 'exports are read by root');
});

test('several capabilities read the union of their slices', () => {
  const both = caller(['infra-admin', 'org-admin'], ['acme']);
  assert.equal(reads(both, routeChange), true);
  assert.equal(reads(both, appSignin), true);
  assert.equal(reads(both, ev('security', 'account', 'globex')), false);
  assert.equal(reads(both, consoleSignin), false);
  const slice = auditSlice(both);
  assert.ok(!slice.all && slice.grants.length === 2);
});

test('a caller with no audit capability is refused, never given an empty slice', () => {
  for (const c of [caller([]), caller(['gateway-admin']), caller(['org-admin']), caller(['gateway-admin', 'org-admin'], []), caller(['toString', '__proto__'])]) {
    assert.throws(() => auditSlice(c), (err: unknown) => err instanceof GatewayError && err.code === 'capability' && err.status === 403 && /audit trail/.test(err.detail), JSON.stringify(c));
  }
});
