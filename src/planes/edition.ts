/**
 * The one place that reads the edition (CONTRACT.md "Running it"): a feature of the licensed
 * edition asks here, and the community edition answers 403 `licensed-edition` with a sentence
 * naming the feature, so an operator knows what is locked, not only that something is.
 */
import { GatewayError } from '../http/errors.ts';
import type { Settings } from '../settings/settings.ts';

export const isLicensed = (settings: Pick<Settings, 'edition'>): boolean => settings.edition === 'licensed';

/** Refuses `feature` (a noun phrase: "The audit export") on the community edition. */
export function requireLicensed(settings: Pick<Settings, 'edition'>, feature: string): void {
  if (!isLicensed(settings)) {
    throw new GatewayError('licensed-edition', `${feature} belongs to the licensed edition; this gateway runs the community edition (GATEWAY_EDITION).`);
  }
}
