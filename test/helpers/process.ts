/** Runs the real `meerkat` command in a child process, as an operator would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The command as an operator runs it: compiled (`npm start`) when the test runner has just built
 * it (MEERKAT_COMPILED=1, see test/run.mjs), from source through tsx otherwise.
 */
const COMMAND = process.env.MEERKAT_COMPILED === '1'
  ? [fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url))]
  : ['--import', 'tsx', fileURLToPath(new URL('../../src/cli.ts', import.meta.url))];

export interface GatewayProcess {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly stdout: () => string;
  /** Starts reading standard output (at once unless `readStdout: false` was asked); idempotent. */
  readonly readStdout: () => void;
  /** Plain door URL per plane, from the `listening` lines. */
  readonly urls: Record<string, string>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** Runs a command to its end; one still running after `timeoutMs` is killed and reports code null. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...COMMAND, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => { stderr += `\n(still running after ${timeoutMs} ms: killed)\n`; child.kill('SIGKILL'); }, timeoutMs);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

export interface ProcessOptions {
  /**
   * false: standard output is not read until `readStdout()`, so the pipe fills up as behind a log
   * agent that stalled. Standard error is always read (the doors are found there).
   */
  readonly readStdout?: boolean;
  /** Node flags before the gateway's script (`--max-old-space-size=…`, as an operator may start it). */
  readonly nodeArgs?: readonly string[];
}

/** The door a `listening` line names: the startup JSON format, or an object written for a log agent. */
function listeningDoor(line: string): { plane: string; address: string } | null {
  if (!line.startsWith('{')) return null;
  try {
    const rec = JSON.parse(line) as { msg?: string; body?: string; plane?: string; address?: string; attributes?: { plane?: string; address?: string } };
    const attrs = rec.msg === 'listening' ? rec : rec.body === 'listening' ? rec.attributes : undefined;
    return attrs?.plane && attrs.address ? { plane: attrs.plane, address: attrs.address } : null;
  } catch {
    return null; // not a log line
  }
}

/**
 * Starts `meerkat start`; resolves once the three plain doors are listening. The default wait is
 * long because CI runs two test files at once on two cores and a boot compiles its workers.
 */
export function startProcess(env: Record<string, string>, timeoutMs = 120_000, opts: ProcessOptions = {}): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...COMMAND, 'start'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', GATEWAY_LOG_FORMAT: 'json', ...env },
  });
  let stderr = '';
  let stdout = '';
  const urls: Record<string, string> = {};
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let reading = false;
  const readStdout = () => {
    if (reading) return;
    reading = true;
    child.stdout.on('data', (d) => { stdout += d; });
  };
  if (opts.readStdout !== false) readStdout();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`gateway did not start:\n${stderr}`)); }, timeoutMs);
    // A line may arrive in two chunks: only whole lines are read.
    let partial = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const door = listeningDoor(line);
        if (door) urls[door.plane] = `http://${door.address}`;
      }
      if (Object.keys(urls).length === 3) {
        clearTimeout(timer);
        resolve({ child, urls, exited, stderr: () => stderr, stdout: () => stdout, readStdout });
      }
    });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`gateway exited with ${code} before listening:\n${stderr}`)); });
  });
}
