#!/usr/bin/env node
// start-meerkat.mjs - runs the compiled gateway for the proxy benchmark (the `meerkat` target of run.mjs).
// See bench/proxy/README.md, "Meerkat".
//
// Stays in the foreground (the harness stops its whole process group):
//   1. spawns `node dist/src/cli.js start` of this checkout with its data plane on $BENCH_HOST:$BENCH_PORT,
//      the other planes on 127.0.0.1:0, a fresh temp data directory (SQLite) and a random root password;
//   2. waits for the gateway's `listening` log lines (JSON log on stderr, echoed to this stderr);
//   3. configures through the control plane: role `staff`, route `bench` (/bench -> $BENCH_UPSTREAM,
//      rule roles [staff], identity headers), account `bench` holding staff, a personal token for it;
//   4. checks GET /bench/ with the token answers 200, then prints on stdout ONE line
//        BENCH_HEADER Authorization: Bearer <token>
//      which run.mjs adds to the headers of wrk and of its readiness GET;
//   5. forwards SIGTERM / SIGINT / SIGHUP to the gateway, exits with the gateway's code and removes its temp dir.
// BENCH_ROUTE [protected] takes parts off the route, to measure what each costs: `roles` keeps the token and
// the role rule but forwards no identity headers; `public` has no rule and no identity, and no token is sent
// (no BENCH_HEADER Authorization line).
// BENCH_ACCESS_LOG=on switches the access log on before step 4 (PUT /api/settings/logs); step 4 also prints
// BENCH_CONTROL <origin> and BENCH_SESSION <cookie> (root's session) for a harness that reads the control plane.
// With BENCH_TLS_CERT and BENCH_TLS_KEY (PEM files), step 3 also imports that pair and places it on the data plane
// (POST /api/certificates, PUT /api/certificates/{id}/placement {planes: [app]}): the HTTPS door opens on
// $BENCH_HOST:$BENCH_TLS_PORT and step 4 also checks GET /bench/ through it (verified with BENCH_TLS_CA for
// BENCH_TLS_NAME when given) before printing. bench/https uses this.
//
// Env: BENCH_UPSTREAM (required, origin, trailing slash allowed), BENCH_PORT [0 = any], BENCH_HOST [127.0.0.1],
//      BENCH_POOL (informational: the gateway sizes its own upstream pool),
//      MEERKAT_NODE_ARGS [none]: extra node flags for the gateway, space-separated
//        (e.g. '--cpu-prof --cpu-prof-dir=/tmp/meerkat-prof'),
//      MEERKAT_START_TIMEOUT [120]: seconds for the gateway to listen and be configured,
//      BENCH_TLS_CERT, BENCH_TLS_KEY, BENCH_TLS_PORT [0 = any], BENCH_TLS_CA, BENCH_TLS_NAME: the HTTPS door (above),
//      BENCH_HOST_NAME [none]: also prints BENCH_HEADER Host: <name>, so the load names the gateway as the world
//        would (a name, not an address: HTTPS answers then carry HSTS, spec 1.2 rule 12).
// Usable by hand too: BENCH_UPSTREAM=http://127.0.0.1:8081 BENCH_PORT=8080 node bench/proxy/start-meerkat.mjs
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway, startOptions } from '../lib/gateway.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const say = (msg) => process.stderr.write(`start-meerkat: ${msg}\n`);
const fail = (msg) => { say(`ERROR: ${msg}`); process.exit(1); };

const opts = startOptions(fail);
const routeMode = process.env.BENCH_ROUTE?.trim() || 'protected';
if (!['protected', 'roles', 'public'].includes(routeMode)) fail(`BENCH_ROUTE: "${routeMode}" is not protected, roles or public`);
const routeBody = (upstream) => routeMode === 'public' ? { upstream, paths: ['/bench'] }
  : { upstream, paths: ['/bench'], rule: { roles: ['staff'] }, ...(routeMode === 'protected' ? { identity: 'headers' } : {}) };
const { upstream } = opts;
const gw = await startGateway({ repo: REPO, say, ...opts });

let token, httpsOrigin, auth;
try {
  auth = await gw.signIn();
  if (process.env.BENCH_ACCESS_LOG === 'on') await gw.call('PUT', '/api/settings/logs', { accessLog: true }, auth);
  await gw.call('PUT', '/api/roles/staff', {}, auth);
  await gw.call('PUT', '/api/routes/bench', routeBody(upstream), auth);
  await gw.call('POST', '/api/accounts', { name: 'bench', password: 'bench-password-1', roles: ['staff'] }, auth);
  token = (await gw.call('POST', '/api/tokens', { name: 'bench', kind: 'personal', account: 'bench' }, auth)).json?.token;
  if (!token) throw new Error('POST /api/tokens: no token in the answer');
  const sent = routeMode === 'public' ? {} : { authorization: `Bearer ${token}` };
  await gw.waitData('/bench/', sent);
  if (opts.tls) {
    httpsOrigin = await gw.placeCertificate(auth, opts.tls);
    // Without a CA to verify against, the check only asks for a 200 (a self-signed pair placed by hand).
    const tls = opts.tls.ca ? { ca: opts.tls.ca, servername: opts.tls.servername } : { ca: opts.tls.cert, servername: opts.tls.servername };
    await gw.waitData('/bench/', sent, {}, { origin: httpsOrigin, tls });
  }
} catch (e) {
  await gw.abandon(`configuring the gateway failed: ${e.message}`);
}
gw.ready();
say(`ready: data plane ${gw.data}${httpsOrigin ? ` and ${httpsOrigin}` : ''} (route /bench -> ${upstream}, ${routeMode}), control plane ${gw.control}, data dir ${gw.dataDir}`);
const hostName = process.env.BENCH_HOST_NAME?.trim();
process.stdout.write(`${routeMode === 'public' ? '' : `BENCH_HEADER Authorization: Bearer ${token}\n`}${hostName ? `BENCH_HEADER Host: ${hostName}\n` : ''}BENCH_CONTROL ${gw.control}\nBENCH_SESSION ${auth.cookie}\n`);
