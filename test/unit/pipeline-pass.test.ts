import { DEFAULT_LOG_SETTINGS } from '../../src/core/logs/log-settings.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigView } from '../../src/actors/config/client.ts';
import type { Snapshot, TokenView } from '../../src/actors/config/messages.ts';
import type { RouteView } from '../../src/core/model.ts';
import { GatewayError } from '../../src/http/errors.ts';
import { generateSigningKey } from '../../src/pipeline/identity.ts';
import { issuerOf, pass, type PassRequest } from '../../src/pipeline/pass.ts';
import { UpstreamPools } from '../../src/pipeline/upstream.ts';
import { hashSecret } from '../../src/core/secrets.ts';

const route: RouteView = {
  id: 'billing', upstream: 'http://127.0.0.1:9/svc', paths: ['/billing'], hosts: ['billing.example'], stripPrefix: false,
  rule: { roles: ['reader'] }, endpointRules: [], identity: 'jwt', timeoutMs: 30_000, organisation: null,
};
const schedulesToken: TokenView = { id: 'tok1', name: 'billing-jobs', kind: 'schedules', hash: 'h1', account: null, routes: ['billing'], roles: ['ops'], organisations: [] };
const personal: TokenView = { id: 'tok2', name: 'alice-cli', kind: 'personal', hash: hashSecret('mk_alice'), account: 'acc1', routes: null, roles: null, organisations: null };

function viewWith(tokens: readonly TokenView[], implies: readonly string[] = ['reader']): ConfigView {
  const view = new ConfigView();
  const snapshot: Snapshot = {
    mark: '1',
    accounts: [{ id: 'acc1', name: 'alice', passwordHash: 'x', capabilities: [], roles: ['reader'], organisation: null, disabled: false }],
    sessions: [], tokens, routes: [route],
    roles: [{ name: 'ops', implies }, { name: 'reader', implies: [] }],
    organisations: [], signingKeys: [generateSigningKey()], trustedAuthorities: [], logs: DEFAULT_LOG_SETTINGS,
  };
  view.apply({ type: 'snapshot', snapshot });
  return view;
}

const pools = new UpstreamPools();
const scheduled = (over: Partial<PassRequest> = {}): PassRequest => ({
  method: 'POST', host: 'billing.example', path: '/billing/close', query: '', headers: {}, client: null,
  who: { kind: 'posed', routeId: 'billing', roles: ['reader'], organisation: null, tokenId: 'tok1' }, ownCookies: new Set(), ...over,
});
const refusal = (fn: () => unknown): GatewayError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  assert.fail('expected a refusal');
};
const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

test('a scheduled call whose token is gone is refused token.revoked; within its perimeter it passes', () => {
  assert.equal(refusal(() => pass(viewWith([]), pools, scheduled(), 0)).code, 'token.revoked');
  const ok = pass(viewWith([schedulesToken]), pools, scheduled(), 0);
  assert.equal(claims(ok.upstream.headers['x-gateway-identity']!).sub, 'scheduler');
  assert.equal(ok.upstream.headers['x-forwarded-for'], undefined, 'no client, no forwarding facts');
});

test('roles or routes taken out of the token\'s perimeter refuse the call', () => {
  const shrunk = refusal(() => pass(viewWith([schedulesToken], []), pools, scheduled(), 0));
  assert.equal(shrunk.code, 'perimeter');
  assert.match(shrunk.detail, /no longer ask for "reader"/);
  const narrowed = refusal(() => pass(viewWith([{ ...schedulesToken, routes: ['ledger'] }]), pools, scheduled(), 0));
  assert.match(narrowed.detail, /no longer reach the route "billing"/);
});

test('a scheduled call cannot climb out of its route, nor be judged by another one', () => {
  assert.equal(refusal(() => pass(viewWith([schedulesToken]), pools, scheduled({ path: '/billing/../admin' }), 0)).code, 'path.invalid');
  assert.equal(refusal(() => pass(viewWith([schedulesToken]), pools, scheduled({ path: '/ledger/x' }), 0)).code, 'route.unknown');
});

test('identity headers a caller or a schedule writes never pass; the JWT issuer is chosen the same way for both', () => {
  const forged = { 'x-gateway-user': 'root', 'remote-user': 'root', 'x-gateway-identity': 'forged', 'x-forwarded-for': '10.0.0.1' };
  const view = viewWith([schedulesToken, personal]);
  const byCall = pass(view, pools, scheduled({ headers: forged }), 0);
  const byRequest = pass(view, pools, {
    method: 'POST', host: 'billing.example:8080', path: '/billing/close', query: 'a=1', headers: { ...forged, authorization: 'Bearer mk_alice' },
    client: { address: '203.0.113.9', secure: false }, who: { kind: 'presented', authorization: 'Bearer mk_alice', appCookie: undefined }, ownCookies: new Set(),
  }, 0);
  for (const p of [byCall, byRequest]) {
    assert.equal(p.upstream.headers['x-gateway-user'], undefined);
    assert.equal(p.upstream.headers['remote-user'], undefined);
    assert.notEqual(p.upstream.headers['x-gateway-identity'], 'forged');
    assert.equal(claims(p.upstream.headers['x-gateway-identity']!).iss, 'https://billing.example');
  }
  assert.equal(byRequest.upstream.headers['x-forwarded-for'], '203.0.113.9');
  assert.equal(byRequest.upstream.headers.authorization, undefined, 'a gateway token never travels upstream');
  assert.equal(byRequest.upstream.path, '/svc/billing/close?a=1');
  assert.equal(issuerOf('[::1]:8080'), 'https://[::1]');
});
