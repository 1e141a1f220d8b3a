// upstream.mjs - the opening every gateway bench shares: tools checked, the build's age, free ports, and the
// proxy bench's upstream nginx (bench/proxy/upstream.conf.template) started on the load core.
import path from 'node:path';
import { freePorts, log, preflight, render, start, TMP, waitHttp } from './procs.mjs';
import { staleBuild } from './report.mjs';

/** Returns { wrkV, ports (one per target), upstreamUrl, upstreamProc, expected (the upstream's body) }. */
export async function openBench(cfg, { repo, cli, targets }) {
  const wrkV = preflight(cfg);
  if (staleBuild(path.join(repo, 'src'), cli)) log('WARNING: some src/ file is newer than dist/: the gateways run the last build (npm run build to refresh it)');
  const [upPort, ...ports] = await freePorts(1 + targets);
  const upstreamUrl = `http://127.0.0.1:${upPort}/`;
  const upConf = render(path.join(repo, 'bench', 'proxy', 'upstream.conf.template'), { PREFIX: TMP, UP_PORT: upPort });
  const upstreamProc = start('upstream', cfg.nginxBin, ['-p', `${TMP}/`, '-e', `${TMP}/logs/upstream-error.log`, '-c', upConf], { cpu: cfg.loadCpu });
  const expected = (await waitHttp('upstream', upstreamProc, `${upstreamUrl}bench/`)).body;
  return { wrkV, ports, upstreamUrl, upstreamProc, expected };
}
