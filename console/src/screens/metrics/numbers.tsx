/** The five numbers over the last minute (spec 1.5 rule 2), with their period written out. */
import { formatMs, type Minute } from './types.ts';

export function MinuteNumbers({ minute }: { minute: Minute }) {
  const rows: Array<[string, string, string]> = [
    ['requests', 'Requests', String(minute.requests)],
    ['failed', 'Failed', String(minute.failed)],
    ['rps', 'Requests per second', String(minute.rps)],
    ['p50', 'p50', formatMs(minute.p50)],
    ['p95', 'p95', formatMs(minute.p95)],
  ];
  return (
    <section aria-labelledby="metrics-minute">
      <h2 id="metrics-minute">Over the last {minute.period}</h2>
      <dl class="numbers">
        {rows.map(([key, label, value]) => (
          <div key={key}>
            <dt id={`metrics-minute-${key}`}>{label}</dt>
            <dd aria-labelledby={`metrics-minute-${key}`}>{value}</dd>
          </div>
        ))}
      </dl>
      <p class="muted">Latencies in milliseconds, from the minute's histograms merged over every node; failed counts the answers that failed and the upstreams that could not be reached.</p>
    </section>
  );
}
