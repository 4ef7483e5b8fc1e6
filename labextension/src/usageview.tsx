/**
 * The sidebar's live resource graphs: per container, a sparkline of CPU % and
 * one of memory used (of its limit) over the last minutes, with the current
 * values as text and the network and block IO totals in the tooltip. The data
 * comes from a {@link UsageStream} (./usage) that {@link useUsage} opens while
 * a session is shown expanded and running, and closes otherwise.
 */

import * as React from 'react';

import { ClusterClient, IContainerUsage } from './api';
import { getTrans } from './i18n';
import { IUsagePoint, UsageModel, UsageStream } from './usage';
import { formatPercent, formatSizeShort } from './units';

/**
 * The usage of session `sessionId` while `active` (one stats stream, closed
 * when `active` turns false, the session changes or the component unmounts);
 * null when not active.
 */
export function useUsage(
  client: ClusterClient | undefined,
  sessionId: string,
  active: boolean
): UsageModel | null {
  const [model, setModel] = React.useState<UsageModel | null>(null);
  React.useEffect(() => {
    if (!active || !client) {
      return;
    }
    const stream = new UsageStream({ client, sessionId });
    setModel(stream.model);
    stream.start();
    return () => {
      stream.dispose();
      setModel(null);
    };
  }, [client, sessionId, active]);
  return active ? model : null;
}

/** A point of a sparkline: time (ms) and value, null for a gap. */
export interface ISparkPoint {
  t: number;
  v: number | null;
}

/**
 * The SVG path of `points` in a `width` × `height` box: time runs from
 * `end - windowMs` (left) to `end` (right), values from 0 (bottom) to `max`
 * (top, larger values are clipped); a null value breaks the line. `count` is
 * the number of points drawn.
 */
export function sparklinePath(
  points: readonly ISparkPoint[],
  options: {
    max: number;
    end: number;
    windowMs: number;
    width: number;
    height: number;
  }
): { d: string; count: number } {
  const { max, end, windowMs, width, height } = options;
  const start = end - windowMs;
  const parts: string[] = [];
  let count = 0;
  let pen = false;
  for (const p of points) {
    if (p.v === null || !Number.isFinite(p.v) || p.t < start) {
      pen = false;
      continue;
    }
    const x = ((p.t - start) / windowMs) * width;
    const y = height - (Math.min(Math.max(p.v, 0), max) / (max || 1)) * height;
    parts.push(`${pen ? 'L' : 'M'}${round(x)} ${round(y)}`);
    pen = true;
    count++;
  }
  return { d: parts.join(' '), count };
}

/** A small inline line graph, labelled for screen readers. */
export function Sparkline(props: {
  points: readonly ISparkPoint[];
  max: number;
  end: number;
  windowMs: number;
  label: string;
  className?: string;
  width?: number;
  height?: number;
}): JSX.Element {
  const width = props.width ?? 72;
  const height = props.height ?? 16;
  const { d, count } = sparklinePath(props.points, {
    max: props.max,
    end: props.end,
    windowMs: props.windowMs,
    width,
    height
  });
  return (
    <svg
      className={`jp-ClusterSparkline ${props.className ?? ''}`}
      role="img"
      aria-label={props.label}
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      preserveAspectRatio="none"
      data-points={count}
    >
      <path className="jp-ClusterSparkline-line" d={d} />
    </svg>
  );
}

/**
 * One container's graphs: CPU % (scaled to `cpus` CPUs, or more when used)
 * and memory used of its limit, the values now, the IO totals as a tooltip.
 */
export function ContainerUsage(props: {
  model: UsageModel;
  host: string;
  cpus?: number;
}): JSX.Element {
  const trans = getTrans();
  useChanged(props.model);
  const { model, host } = props;
  const points = model.points(host);
  const now = model.latest(host);
  if (!now || model.end === null) {
    const text = points.length
      ? trans.__('not running')
      : (model.message ?? trans.__('reading use…'));
    return (
      <div className="jp-ClusterUsage jp-mod-empty" data-host={host}>
        {text}
      </div>
    );
  }
  const cpu = points.map(p => spark(p, u => u.cpu_percent));
  const mem = points.map(p => spark(p, u => u.mem_used));
  const cpuMax = Math.max(
    (props.cpus ?? 1) * 100,
    ...cpu.map(p => p.v ?? 0),
    1
  );
  const memMax = Math.max(now.mem_limit, ...mem.map(p => p.v ?? 0), 1);
  const minutes = Math.round(model.windowMs / 60000);
  const cpuText = trans.__('CPU %1', formatPercent(now.cpu_percent));
  const memText = trans.__(
    'MEM %1 / %2',
    formatSizeShort(now.mem_used),
    formatSizeShort(now.mem_limit)
  );
  const common = { end: model.end, windowMs: model.windowMs };
  return (
    <div className="jp-ClusterUsage" data-host={host} title={describeIO(now)}>
      <span className="jp-ClusterUsage-metric">
        <Sparkline
          {...common}
          className="jp-ClusterUsage-cpu"
          points={cpu}
          max={cpuMax}
          label={trans.__(
            'CPU use of %1 over the last %2 minutes: %3 now',
            host,
            minutes,
            formatPercent(now.cpu_percent)
          )}
        />
        <span className="jp-ClusterUsage-value">{cpuText}</span>
      </span>
      <span className="jp-ClusterUsage-metric">
        <Sparkline
          {...common}
          className="jp-ClusterUsage-mem"
          points={mem}
          max={memMax}
          label={trans.__(
            'Memory use of %1 over the last %2 minutes: %3',
            host,
            minutes,
            memText
          )}
        />
        <span className="jp-ClusterUsage-value">{memText}</span>
      </span>
    </div>
  );
}

/** The IO totals and process count of a sample, one per line. */
export function describeIO(usage: IContainerUsage): string {
  const trans = getTrans();
  return [
    trans.__(
      'Network: %1 received, %2 sent',
      formatSizeShort(usage.net_rx),
      formatSizeShort(usage.net_tx)
    ),
    trans.__(
      'Block IO: %1 read, %2 written',
      formatSizeShort(usage.block_read),
      formatSizeShort(usage.block_write)
    ),
    trans._n('%1 process', '%1 processes', usage.pids)
  ].join('\n');
}

function spark(
  point: IUsagePoint,
  value: (u: IContainerUsage) => number
): ISparkPoint {
  return { t: point.t, v: point.usage ? value(point.usage) : null };
}

/** Re-render whenever `model` changes. */
function useChanged(model: UsageModel): void {
  const [, setTick] = React.useState(0);
  React.useEffect(() => {
    const onChanged = () => setTick(n => n + 1);
    model.changed.connect(onChanged);
    return () => {
      model.changed.disconnect(onChanged);
    };
  }, [model]);
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
