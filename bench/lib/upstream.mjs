// upstream.mjs - the opening every gateway bench shares: tools checked, the build's age, free ports, and the
// proxy bench's upstream nginx (bench/proxy/upstream.conf.template) started on the load core.
import fs from 'node:fs';
import path from 'node:path';
import { freePorts, log, preflight, render, start, TMP, waitHttp } from './procs.mjs';
import { staleBuild } from './report.mjs';

/** The size of the upstream's large answer (`/bench/big`, the proxy bench's LOAD=large). */
export const BIG_ANSWER_BYTES = 256 * 1024;

/**
 * The proxy bench's upstream nginx on the load core: `return 200` with a 90-byte JSON everywhere, and at
 * /bench/big a file of BIG_ANSWER_BYTES (printable, so a readiness check compares it as text) for GET and POST.
 * Returns { upstreamProc, expected: the body at `probe` }.
 */
export async function startUpstream(cfg, repo, upPort, probe = 'bench/') {
  const html = path.join(TMP, 'html');
  fs.mkdirSync(path.join(html, 'bench'), { recursive: true });
  fs.writeFileSync(path.join(html, 'bench', 'big'), 'meerkat proxy bench, 256 KiB answer.\n'.repeat(8192).slice(0, BIG_ANSWER_BYTES));
  const upConf = render(path.join(repo, 'bench', 'proxy', 'upstream.conf.template'), { PREFIX: TMP, UP_PORT: upPort, HTML: html });
  const upstreamProc = start('upstream', cfg.nginxBin, ['-p', `${TMP}/`, '-e', `${TMP}/logs/upstream-error.log`, '-c', upConf], { cpu: cfg.loadCpu });
  const expected = (await waitHttp('upstream', upstreamProc, `http://127.0.0.1:${upPort}/${probe}`)).body;
  return { upstreamProc, expected };
}

/** Returns { wrkV, ports (one per target), upstreamUrl, upstreamProc, expected (the upstream's body) }. */
export async function openBench(cfg, { repo, cli, targets }) {
  const wrkV = preflight(cfg);
  if (staleBuild(path.join(repo, 'src'), cli)) log('WARNING: some src/ file is newer than dist/: the gateways run the last build (npm run build to refresh it)');
  const [upPort, ...ports] = await freePorts(1 + targets);
  const upstreamUrl = `http://127.0.0.1:${upPort}/`;
  const { upstreamProc, expected } = await startUpstream(cfg, repo, upPort);
  return { wrkV, ports, upstreamUrl, upstreamProc, expected };
}
