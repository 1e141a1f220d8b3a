import { invalidField } from '../../http/errors.ts';
import type { Router } from '../../http/router.ts';
import { parseDuration } from '../../core/schedules/cadence/duration.ts';
import type { GatewayContext } from '../context.ts';
import type { Principal } from '../principal.ts';

const NOW = { type: 'object', required: ['now'], properties: { now: { type: 'integer', description: 'epoch milliseconds' } } } as const;

/** The test clock (CONTRACT.md). Registered only with GATEWAY_CLOCK=manual, on loopback doors. */
export function addClockRoutes(router: Router<Principal>, gw: GatewayContext): void {
  const advance = gw.advanceClock;
  if (!advance) return;
  router.add('GET', '/__clock', {
    summary: 'Test clock: the gateway\'s now', tags: ['test clock'], auth: 'none',
    description: 'Exists only with GATEWAY_CLOCK=manual, which is refused unless every listener is on loopback. The clock starts at GATEWAY_CLOCK_START when it is set, else at the wall clock.',
    responses: { 200: { description: 'the clock', schema: NOW } },
  }, () => ({ body: { now: gw.clock.now() } }));

  router.add('POST', '/__clock/advance', {
    summary: 'Test clock: move time forward', tags: ['test clock'], auth: 'none',
    description: 'Every timer due on the way fires, on every thread, before the answer.',
    body: { type: 'object', required: ['by'], properties: { by: { type: 'string', description: 'ISO 8601 duration, e.g. PT5M' } } },
    responses: { 200: { description: 'the clock after the move', schema: NOW }, 400: { description: 'by is not a duration' } },
  }, async (ctx) => {
    const body = await ctx.json();
    const by = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).by : undefined;
    if (typeof by !== 'string') throw invalidField('by', 'by must be an ISO 8601 duration such as PT5M.');
    const parsed = parseDuration(by);
    if (!parsed.ok) throw invalidField('by', parsed.message);
    return { body: { now: await advance(parsed.value) } };
  });
}
