/**
 * A batch of samples into the ring: each key's exchanges are gathered into one group and
 * recorded at once, its endpoint named once (bench/RESULTS.md, "The MetricsRing records a batch
 * per key"). The main thread sends a batch before the first sample of the next 5 s interval, so a
 * batch is of one interval; one that is not (a restarted ring's queue, a clock moved back) is
 * recorded a sample at a time, as it always could be.
 */
import { Group } from '../../core/metrics/group.ts';
import { INTERVAL_MS, isFailure, type MetricsRing } from '../../core/metrics/ring.ts';
import type { RouteNames } from '../../core/metrics/route-names.ts';
import { SAMPLE_WIDTH, type SampleBatch } from './messages.ts';
import { OUTCOMES } from './samples.ts';

interface Named {
  readonly template: string | null;
  readonly deduced: boolean;
  /** Naming it folded labels: the ring renamed them, and names taken before are stale. */
  readonly folded: boolean;
}

/** The endpoint of a key, named as of `at`; a fold's renames go to the ring first. */
function nameOf(ring: MetricsRing, names: RouteNames, [route, method, path]: SampleBatch['keys'][number], at: number): Named {
  // A call no route took (or without a service path) has no endpoint.
  if (route === null || path === null) return { template: null, deduced: false, folded: false };
  const name = names.of(route).name(method, path, at);
  if (name.renamed) ring.rename(route, name.renamed);
  return { template: name.template, deduced: name.deduced, folded: name.renamed != null };
}

function oneInterval(samples: Float64Array): boolean {
  const first = Math.floor(samples[3]! / INTERVAL_MS);
  for (let i = SAMPLE_WIDTH + 3; i < samples.length; i += SAMPLE_WIDTH) {
    if (Math.floor(samples[i]! / INTERVAL_MS) !== first) return false;
  }
  return true;
}

export class BatchRecorder {
  readonly #group = new Group();

  constructor(private readonly ring: MetricsRing, private readonly names: RouteNames) {}

  record({ keys, samples }: SampleBatch): void {
    if (samples.length === 0) return;
    if (!oneInterval(samples)) {
      this.#eachSample(keys, samples);
      return;
    }
    // The samples' offsets sorted by key (a counting sort: keys are numbered from 0 in the order
    // they first came), so that each key's exchanges are one group.
    const starts = new Int32Array(keys.length + 1);
    for (let i = 0; i < samples.length; i += SAMPLE_WIDTH) starts[samples[i]! + 1]!++;
    for (let k = 0; k < keys.length; k++) starts[k + 1]! += starts[k]!;
    const next = starts.slice(0, keys.length);
    const order = new Int32Array(samples.length / SAMPLE_WIDTH);
    for (let i = 0; i < samples.length; i += SAMPLE_WIDTH) order[next[samples[i]!]!++] = i;
    const g = this.#group;
    for (let k = 0; k < keys.length; k++) {
      if (starts[k] === starts[k + 1]) continue;
      const at = samples[order[starts[k]!]! + 3]!;
      const { template, deduced } = nameOf(this.ring, this.names, keys[k]!, at);
      g.clear();
      for (let j = starts[k]!; j < starts[k + 1]!; j++) {
        const i = order[j]!;
        g.add(isFailure(OUTCOMES[samples[i + 1]!]!), samples[i + 2]!);
      }
      this.ring.recordGroup(keys[k]![0], template, deduced, at, g);
    }
  }

  #eachSample(keys: SampleBatch['keys'], samples: Float64Array): void {
    // Each key named once a batch; a fold renames labels, so names are taken again after one.
    let named: Array<Named | undefined> = [];
    for (let i = 0; i < samples.length; i += SAMPLE_WIDTH) {
      const k = samples[i]!;
      const at = samples[i + 3]!;
      let n = named[k];
      if (n === undefined) {
        n = nameOf(this.ring, this.names, keys[k]!, at);
        if (n.folded) named = [];
        named[k] = n;
      }
      this.ring.record({ route: keys[k]![0], template: n.template, deduced: n.deduced, outcome: OUTCOMES[samples[i + 1]!]!, us: samples[i + 2]!, at });
    }
  }
}
