/** Runs the real `meerkat` command in a child process, as an operator would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

export interface GatewayProcess {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly stdout: () => string;
  /** Plain door URL per plane, from the `listening` lines. */
  readonly urls: Record<string, string>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** Runs a command to its end; one still running after `timeoutMs` is killed and reports code null. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => { stderr += `\n(still running after ${timeoutMs} ms: killed)\n`; child.kill('SIGKILL'); }, timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/** Starts `meerkat start`; resolves once the three plain doors are listening. */
export function startProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'start'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', GATEWAY_LOG_FORMAT: 'json', ...env },
  });
  let stderr = '';
  let stdout = '';
  const urls: Record<string, string> = {};
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`gateway did not start:\n${stderr}`)); }, timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      for (const line of d.toString().split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const rec = JSON.parse(line) as { msg?: string; plane?: string; address?: string };
          if (rec.msg === 'listening' && rec.plane && rec.address) urls[rec.plane] = `http://${rec.address}`;
        } catch {
          // not a log line
        }
      }
      if (Object.keys(urls).length === 3) {
        clearTimeout(timer);
        resolve({ child, urls, exited, stderr: () => stderr, stdout: () => stdout });
      }
    });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`gateway exited with ${code} before listening:\n${stderr}`)); });
  });
}
