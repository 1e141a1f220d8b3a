/**
 * A change made through an actor that does not keep the trail in its own transaction (the
 * scheduler's console actions, the settings of the scheduler and of the trail): the plane notes
 * it once the actor answered, stamped with the caller, and the AuditBatcher writes it.
 */
import { linesOf, type ChangeNote } from '../../core/audit/lines.ts';
import type { RequestContext } from '../../http/router.ts';
import type { GatewayContext } from '../context.ts';
import { callerOf, type Principal } from '../principal.ts';

export function recordChange(gw: GatewayContext, ctx: RequestContext<Principal>, note: ChangeNote): void {
  for (const { node: _node, ...line } of linesOf([note], callerOf(gw, ctx.principal, ctx.ex), gw.clock.now(), gw.settings.nodeName)) {
    gw.audit.record(line);
  }
}
