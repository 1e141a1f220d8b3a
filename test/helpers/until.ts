import assert from 'node:assert/strict';

/**
 * Waits, on real I/O, until `probe` gives a value (not undefined), within `ms`: for what travels
 * between nodes or threads on its own time (the change bus, a child process's pipe).
 */
export async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, ms = 15_000, stepMs = 25): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
