/**
 * The sidebar's live resource graphs: per container, a sparkline of CPU % and
 * one of memory used (of its limit) over the last minutes, with the current
 * values as text and the network and block IO totals in the tooltip; for a
 * container given GPUs, one of their mean utilization with the GPU memory in
 * use as text (or why there are no GPU figures). One {@link Sparkline}
 * (./sparkline) draws each graph. The data comes from a {@link StatsStream}
 * (./stats) that {@link useStats} opens while a session is shown expanded and
 * running, and closes otherwise.
 */

import * as React from 'react';

import { ClusterClient, IContainerUsage } from './api';
import { getTrans } from './i18n';
import { ISparkPoint, Sparkline } from './sparkline';
import { gpuSummary, IStatsPoint, StatsModel, StatsStream } from './stats';
import { formatPercent, formatSizeShort } from './units';

/**
 * The stats of session `sessionId` while `active` (one stats stream, closed
 * when `active` turns false, the session changes or the component unmounts);
 * null when not active.
 */
export function useStats(
  client: ClusterClient | undefined,
  sessionId: string,
  active: boolean
): StatsModel | null {
  const [model, setModel] = React.useState<StatsModel | null>(null);
  React.useEffect(() => {
    if (!active || !client) {
      return;
    }
    const stream = new StatsStream({ client, sessionId });
    setModel(stream.model);
    stream.start();
    return () => {
      stream.dispose();
      setModel(null);
    };
  }, [client, sessionId, active]);
  return active ? model : null;
}

/** One graph of a container: a value per sample, its scale, the value now. */
interface IMetric {
  /** Names the graph's class, `jp-ClusterStats-{kind}`. */
  kind: 'cpu' | 'mem' | 'gpu';
  points: ISparkPoint[];
  max: number;
  /** The value now, shown beside the graph. */
  text: string;
  /** What a screen reader says of the graph. */
  label: string;
  /** A tooltip with details (e.g. each GPU's figures). */
  title?: string;
}

/** A sparkline with its value now as text: each graph of a container. */
function StatsMetric(
  props: IMetric & { end: number; windowMs: number }
): JSX.Element {
  return (
    <span className="jp-ClusterStats-metric" title={props.title}>
      <Sparkline
        className={`jp-ClusterStats-${props.kind}`}
        points={props.points}
        max={props.max}
        end={props.end}
        windowMs={props.windowMs}
        label={props.label}
      />
      <span className="jp-ClusterStats-value">{props.text}</span>
    </span>
  );
}

/**
 * One container's graphs: CPU % (scaled to `cpus` CPUs, or more when used)
 * and memory used of its limit, the values now, the IO totals as a tooltip;
 * for a container given GPUs, their mean utilization with the GPU memory in
 * use, or the note saying why there are no GPU figures.
 */
export function ContainerStats(props: {
  model: StatsModel;
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
      <div className="jp-ClusterStats jp-mod-empty" data-host={host}>
        {text}
      </div>
    );
  }
  const end = model.end;
  const minutes = Math.round(model.windowMs / 60000);
  const cpu = points.map(p => spark(p, u => u.cpu_percent));
  const mem = points.map(p => spark(p, u => u.mem_used));
  const cpuNow = formatPercent(now.cpu_percent);
  const memText = trans.__(
    'MEM %1 / %2',
    formatSizeShort(now.mem_used),
    formatSizeShort(now.mem_limit)
  );
  const metrics: IMetric[] = [
    {
      kind: 'cpu',
      points: cpu,
      max: Math.max((props.cpus ?? 1) * 100, ...cpu.map(p => p.v ?? 0), 1),
      text: trans.__('CPU %1', cpuNow),
      label: trans.__(
        'CPU use of %1 over the last %2 minutes: %3 now',
        host,
        minutes,
        cpuNow
      )
    },
    {
      kind: 'mem',
      points: mem,
      max: Math.max(now.mem_limit, ...mem.map(p => p.v ?? 0), 1),
      text: memText,
      label: trans.__(
        'Memory use of %1 over the last %2 minutes: %3',
        host,
        minutes,
        memText
      )
    }
  ];
  const gpu = gpuMetric(points, now, host, minutes);
  if (gpu) {
    metrics.push(gpu);
  }
  return (
    <div className="jp-ClusterStats" data-host={host} title={describeIO(now)}>
      {metrics.map(m => (
        <StatsMetric key={m.kind} {...m} end={end} windowMs={model.windowMs} />
      ))}
      {now.gpu_note && (
        <span className="jp-ClusterStats-note">{now.gpu_note}</span>
      )}
    </div>
  );
}

/**
 * The GPU graph of a container whose samples carry GPU figures (mean
 * utilization over its GPUs, 0–100 %), or null when none in the window does.
 */
function gpuMetric(
  points: readonly IStatsPoint[],
  now: IContainerUsage,
  host: string,
  minutes: number
): IMetric | null {
  const trans = getTrans();
  if (!points.some(p => gpuSummary(p.usage))) {
    return null;
  }
  const utils = points.map(p => spark(p, u => gpuSummary(u)?.util ?? null));
  const gpus = gpuSummary(now);
  const util = (u: number | null) => (u === null ? '–' : formatPercent(u));
  const mem = (used: number, total: number) =>
    `${formatSizeShort(used)} / ${formatSizeShort(total)}`;
  const text = gpus
    ? trans.__('GPU %1 · %2', util(gpus.util), mem(gpus.memUsed, gpus.memTotal))
    : trans.__('GPU –');
  return {
    kind: 'gpu',
    points: utils,
    max: 100,
    text,
    label: trans.__(
      'GPU use of %1 over the last %2 minutes: %3',
      host,
      minutes,
      text
    ),
    title: gpus?.gpus
      .map(g =>
        trans.__(
          'GPU %1: %2, memory %3',
          g.index,
          util(g.util_percent),
          mem(g.mem_used, g.mem_total)
        )
      )
      .join('\n')
  };
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
  point: IStatsPoint,
  value: (u: IContainerUsage) => number | null
): ISparkPoint {
  return { t: point.t, v: point.usage ? value(point.usage) : null };
}

/** Re-render whenever `model` changes. */
function useChanged(model: StatsModel): void {
  const [, setTick] = React.useState(0);
  React.useEffect(() => {
    const onChanged = () => setTick(n => n + 1);
    model.changed.connect(onChanged);
    return () => {
      model.changed.disconnect(onChanged);
    };
  }, [model]);
}
