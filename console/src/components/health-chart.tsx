import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatDuration } from '../format';
import type { HealthOverTime, HealthRange } from '../types';
import { useApi } from '../use-api';

const RANGES: { value: HealthRange; label: string }[] = [
  { value: 'hour', label: 'Last hour' },
  { value: 'day', label: 'Last day' },
  { value: 'week', label: 'Last week' },
];
/** The chart follows new outcomes while the page is open. */
const REFRESH_MS = 10_000;
// The bars' colours; the legend's swatches (styles.css, .swatch-*) are the same.
const COLOURS = { sent: '#1e7a3c', retried: '#d08a00', failed: '#b3261e' };

/**
 * Attempt outcomes over time (GET /api/admin/deliveries/health), for one webhook or all: stacked bars of sent,
 * retried and failed per minute, hour or day, the success rate and p95 attempt duration beside them. uPlot is loaded
 * with the first chart (a chunk of its own), so pages without one do not carry it.
 */
export function HealthChart({ webhookId }: { webhookId?: number }) {
  const [range, setRange] = useState<HealthRange>('hour');
  const query = new URLSearchParams({ range, ...(webhookId === undefined ? {} : { webhookId: String(webhookId) }) });
  const health = useApi<HealthOverTime>(`/api/admin/deliveries/health?${query}`, { refreshMs: REFRESH_MS });
  const data = health.data;
  const totals = data?.totals;

  return (
    <section aria-labelledby="health-over-time" class="card health">
      <div class="section-head">
        <h2 id="health-over-time">Deliveries over time</h2>
        <div class="segmented" role="group" aria-label="Time range">
          {RANGES.map((r) => (
            <button key={r.value} type="button" class="secondary" aria-pressed={range === r.value} onClick={() => setRange(r.value)}>
              {r.label}
            </button>
          ))}
        </div>
      </div>
      {health.error ? <p class="field-error">{health.error.message}</p> : null}
      <div class="health-body">
        <dl class="health-figures" aria-label="Health figures">
          <dt>Success rate</dt>
          <dd>{totals ? (totals.successRate === null ? '—' : `${(totals.successRate * 100).toFixed(1)}%`) : '…'}</dd>
          <dt>p95 attempt</dt>
          <dd>{totals ? (totals.p95DurationMs === null ? '—' : formatDuration(totals.p95DurationMs)) : '…'}</dd>
          <dt>Attempts</dt>
          <dd>{totals ? totals.attempts.toLocaleString('en') : '…'}</dd>
          <dt>
            <span class="swatch swatch-sent" /> Sent
          </dt>
          <dd>{totals?.sent.toLocaleString('en') ?? '…'}</dd>
          <dt>
            <span class="swatch swatch-retried" /> Retried
          </dt>
          <dd>{totals?.retried.toLocaleString('en') ?? '…'}</dd>
          <dt>
            <span class="swatch swatch-failed" /> Failed
          </dt>
          <dd>{totals?.failed.toLocaleString('en') ?? '…'}</dd>
        </dl>
        <Bars health={data} />
      </div>
    </section>
  );
}

/** The stacked bars: sent at the bottom, retried, then failed on top (each drawn as the sum up to it, from the top down). */
function Bars({ health }: { health: HealthOverTime | undefined }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | undefined>(undefined);
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    if (box.current) observer.observe(box.current);
    return () => {
      observer.disconnect();
      chart.current?.destroy();
      chart.current = undefined;
    };
  }, []);

  useEffect(() => {
    if (!health || width === 0 || !box.current) return;
    let cancelled = false;
    void import('uplot').then(({ default: UPlot }) => {
      if (cancelled || !box.current) return;
      const x = health.buckets.map((b) => Date.parse(b.start) / 1000);
      const sent = health.buckets.map((b) => b.sent);
      const retried = health.buckets.map((b, i) => sent[i]! + b.retried);
      const all = health.buckets.map((b, i) => retried[i]! + b.failed);
      const data: uPlot.AlignedData = [x, all, retried, sent];
      if (chart.current && chart.current.width === width) {
        chart.current.setData(data);
        return;
      }
      chart.current?.destroy();
      // Each bar centred on its bucket's start, the x range half a bucket wider on each side, so the first and last
      // bars (the last is the bucket now falls in) are drawn whole.
      const bars = UPlot.paths.bars!({ size: [0.8, 40] });
      const half = health.bucketSeconds / 2;
      const series = (colour: string, label: string): uPlot.Series => ({ label, stroke: colour, fill: colour, width: 0, paths: bars, points: { show: false } });
      chart.current = new UPlot(
        {
          width,
          height: 160,
          legend: { show: false },
          cursor: { show: false },
          scales: {
            x: { time: true, range: (_u, min, max) => [min - half, max + half] },
            y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
          },
          axes: [{ size: 28 }, { size: 40 }],
          series: [{}, series(COLOURS.failed, 'Failed'), series(COLOURS.retried, 'Retried'), series(COLOURS.sent, 'Sent')],
        },
        data,
        box.current,
      );
    });
    return () => {
      cancelled = true;
    };
  }, [health, width]);

  const attempts = health?.totals.attempts ?? 0;
  const label = health
    ? `Attempts per ${health.bucketSeconds === 60 ? 'minute' : health.bucketSeconds === 3600 ? 'hour' : 'day'}: ${attempts} in all, ${health.totals.failed} failed, ${health.totals.retried} retried`
    : 'Loading the chart';
  return <div class="health-chart" ref={box} role="img" aria-label={label} />;
}
