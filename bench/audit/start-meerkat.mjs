#!/usr/bin/env node
// start-meerkat.mjs - runs the compiled gateway for the endpoint-audit bench, one per target of run.mjs.
// See bench/audit/README.md.
//
// Stays in the foreground (the harness stops its whole process group):
//   1. spawns `node dist/src/cli.js start` (bench/lib/gateway.mjs) with GATEWAY_EDITION=licensed;
//   2. configures through the control plane: role `staff`; route `bench` (/bench -> $BENCH_UPSTREAM, stripPrefix,
//      rule roles [staff], identity headers) with the OpenAPI contract of workload.mjs; account `bench` holding
//      staff and a personal token for it; then, by AUDIT_MODE, the route's audit rules (workload.mjs):
//        none  no rule                 on  the loaded operation audited     off  its rule switched off;
//   3. checks that the bench's request (POST /bench/orders/o-1042/lines) answers 200, then prints on stdout
//        BENCH_HEADER Authorization: Bearer <token>     (run.mjs adds it to wrk's headers)
//        BENCH_CONTROL <control plane origin>           (where run.mjs reads GET /api/settings/audit)
//        BENCH_SESSION mk_session=<root's session>      (the cookie for it)
//        BENCH_DB <data dir>/meerkat.db                 (the SQLite file where run.mjs counts the lines written)
//   4. forwards SIGTERM / SIGINT / SIGHUP to the gateway, exits with its code and removes its temp dir.
//
// Env: BENCH_UPSTREAM (required), BENCH_PORT [0 = any], BENCH_HOST [127.0.0.1], AUDIT_MODE [on],
//      MEERKAT_NODE_ARGS [none], MEERKAT_START_TIMEOUT [120] (as bench/proxy/start-meerkat.mjs).
// By hand: BENCH_UPSTREAM=http://127.0.0.1:8081 BENCH_PORT=8080 AUDIT_MODE=on node bench/audit/start-meerkat.mjs
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway, startOptions } from '../lib/gateway.mjs';
import { CONTRACT, REQUEST, rulesFor } from './workload.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const mode = process.env.AUDIT_MODE || 'on';
const say = (msg) => process.stderr.write(`start-meerkat[${mode}]: ${msg}\n`);
const fail = (msg) => { say(`ERROR: ${msg}`); process.exit(1); };

let rules;
try { rules = rulesFor(mode); } catch (e) { fail(e.message); }
const opts = startOptions(fail);
const { upstream } = opts;
const gw = await startGateway({ repo: REPO, say, ...opts, gatewayEnv: { ...opts.gatewayEnv, GATEWAY_EDITION: 'licensed' } });

let token, auth;
try {
  auth = await gw.signIn();
  await gw.call('PUT', '/api/roles/staff', {}, auth);
  await gw.call('PUT', '/api/routes/bench', {
    upstream, paths: ['/bench'], stripPrefix: true, rule: { roles: ['staff'] }, identity: 'headers', openapi: CONTRACT,
  }, auth);
  if (rules) await gw.call('PUT', '/api/routes/bench/audit', rules, auth);
  await gw.call('POST', '/api/accounts', { name: 'bench', password: 'bench-password-1', roles: ['staff'] }, auth);
  token = (await gw.call('POST', '/api/tokens', { name: 'bench', kind: 'personal', account: 'bench' }, auth)).json?.token;
  if (!token) throw new Error('POST /api/tokens: no token in the answer');
  await gw.waitData(REQUEST.path, { ...REQUEST.headers, authorization: `Bearer ${token}` }, { method: REQUEST.method, body: REQUEST.body });
} catch (e) {
  await gw.abandon(`configuring the gateway failed: ${e.message}`);
}
gw.ready();
say(`ready: data plane ${gw.data} (route /bench -> ${upstream}, contract, audit ${mode}), control plane ${gw.control}, data dir ${gw.dataDir}`);
process.stdout.write([
  `BENCH_HEADER Authorization: Bearer ${token}`,
  `BENCH_CONTROL ${gw.control}`,
  `BENCH_SESSION ${auth.cookie}`,
  `BENCH_DB ${path.join(gw.dataDir, 'meerkat.db')}`,
  '',
].join('\n'));
