/**
 * A sparkline: a small inline line graph of values over a time window, drawn
 * as SVG and labelled for screen readers. The sidebar's usage graphs
 * (./statsview) draw every graph of a container with it.
 */

import * as React from 'react';

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

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
