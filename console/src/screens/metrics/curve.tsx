/**
 * The hour's two curves (spec 1.5 rule 2): answered and failed per 5-s interval, drawn by uPlot on
 * a canvas. uPlot styles its elements through the DOM (CSSOM), which the console's policy allows.
 * A canvas says nothing to a screen reader or a test, so the figure's caption states the last
 * interval in words and the figure carries its values as data attributes.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { nodesText, type Point } from './types.ts';

const HEIGHT = 260;
// Canvas strokes cannot read CSS variables: the stylesheet's --ok and --bad, written out.
const ANSWERED = '#1f7a3a';
const FAILED = '#b3261e';

const clock = (t: number) => new Date(t * 1000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function dataOf(points: readonly Point[]): uPlot.AlignedData {
  return [points.map((p) => p.t), points.map((p) => p.answered), points.map((p) => p.failed)];
}

function optionsOf(width: number, pointsNow: () => readonly Point[]): uPlot.Options {
  return {
    width,
    height: HEIGHT,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(5, max)] } },
    series: [
      {
        label: 'Interval',
        // The legend, under the cursor, names the interval and how many nodes its point sums (spec 1.5 rule 6).
        value: (_u, v, _s, idx) => {
          const p = idx === null ? undefined : pointsNow()[idx];
          return p === undefined || v === null ? '—' : `${clock(v)}, covers ${nodesText(p.nodes)}`;
        },
      },
      { label: 'Answered', stroke: ANSWERED, width: 1.5, fill: 'rgba(31, 122, 58, 0.08)', points: { show: false } },
      { label: 'Failed', stroke: FAILED, width: 1.5, points: { show: false } },
    ],
    axes: [{}, { label: 'requests per 5 s', size: 56 }],
    cursor: { drag: { x: false, y: false } },
  };
}

export function Curve({ points, interval }: { points: readonly Point[]; interval: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(points);
  latest.current = points;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const u = new uPlot(optionsOf(Math.max(200, el.clientWidth), () => latest.current), dataOf(latest.current), el);
    plot.current = u;
    // The plot area (the layer over the canvas that follows the pointer) is the picture; the legend
    // beside it stays a table a screen reader can read.
    u.over.setAttribute('role', 'img');
    u.over.setAttribute('aria-label', 'Answered and failed requests per 5-second interval over the last hour');
    let frame = 0;
    // Resized in the next frame, and only when the width changed: the chart's own height must not loop.
    const resize = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        const width = Math.max(200, el.clientWidth);
        if (width !== u.width) u.setSize({ width, height: HEIGHT });
      });
    });
    resize.observe(el);
    return () => {
      cancelAnimationFrame(frame);
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(dataOf(points));
  }, [points]);

  const last = points.at(-1);
  const answered = points.reduce((n, p) => n + p.answered, 0);
  const failed = points.reduce((n, p) => n + p.failed, 0);
  const covers = new Set(points.filter((p) => p.nodes > 0).map((p) => p.nodes));
  return (
    <figure
      class="curve panel"
      data-t={last?.t}
      data-answered={last?.answered}
      data-failed={last?.failed}
      data-nodes={last?.nodes}
    >
      <div ref={box} class="curve-plot" />
      <figcaption>
        {last ? (
          <>
            Last interval, {clock(last.t)} to {clock(last.t + interval)}: <strong>{last.answered} answered</strong>, <strong>{last.failed} failed</strong>;
            it covers {nodesText(last.nodes)}. Over the hour: {answered} answered, {failed} failed
            {covers.size > 1 ? `; its points cover ${Math.min(...covers)} to ${Math.max(...covers)} nodes` : ''}.
          </>
        ) : 'No interval measured yet.'}
      </figcaption>
    </figure>
  );
}
