/**
 * Live resource use of a session's containers, for the sidebar's graphs
 * (./statsview): a {@link StatsModel} keeps the last minutes of samples per
 * container, and a {@link StatsStream} fills it from the server's stats stream
 * (`GET cluster/api/sessions/{id}/stats?follow=1`). The server reads Docker's
 * stats only while someone listens, so a stream is open only while it is shown.
 */

import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  ClusterAPIError,
  ClusterClient,
  IContainerUsage,
  IGpuUsage,
  IStatsSample
} from './api';
import { SSEParser } from './sse';

/** One sample of one container: when (ms) and its use (null: not running). */
export interface IStatsPoint {
  t: number;
  usage: IContainerUsage | null;
}

/** A container's GPUs at a glance: what the sidebar graphs and shows. */
export interface IGpuSummary {
  /** Mean utilization % of the GPUs that report it; null when none does. */
  util: number | null;
  /** Memory used and total (bytes), summed over its GPUs. */
  memUsed: number;
  memTotal: number;
  gpus: readonly IGpuUsage[];
}

/**
 * The GPUs of one sample summed up, or null when it has no GPU figures (a
 * container without GPUs, or one whose GPUs could not be read this time).
 */
export function gpuSummary(usage: IContainerUsage | null): IGpuSummary | null {
  const gpus = usage?.gpus ?? [];
  if (!gpus.length) {
    return null;
  }
  const utils = gpus
    .map(g => g.util_percent)
    .filter((u): u is number => u !== null && Number.isFinite(u));
  return {
    util: utils.length ? utils.reduce((a, b) => a + b, 0) / utils.length : null,
    memUsed: gpus.reduce((sum, g) => sum + g.mem_used, 0),
    memTotal: gpus.reduce((sum, g) => sum + g.mem_total, 0),
    gpus
  };
}

/** The samples of the last `windowMs` per container. */
export class StatsModel {
  constructor(options: { windowMs?: number } = {}) {
    this.windowMs = options.windowMs ?? 5 * 60 * 1000;
  }

  /** How much history is kept (ms). */
  readonly windowMs: number;

  /** Emitted after each sample and each change of `message`. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Hosts seen so far, in the order they came. */
  get hosts(): string[] {
    return [...this._points.keys()];
  }

  /** The time (ms) of the newest sample, or null before the first. */
  get end(): number | null {
    return this._end;
  }

  /** Why samples do not come (the stream failed, the session ended), or null. */
  get message(): string | null {
    return this._message;
  }

  set message(value: string | null) {
    if (value !== this._message) {
      this._message = value;
      this._changed.emit();
    }
  }

  /** Add a sample of every host; drop what is older than the window. */
  add(sample: IStatsSample): void {
    const t = sample.time * 1000;
    this._end = Math.max(this._end ?? t, t);
    const oldest = this._end - this.windowMs;
    for (const [host, usage] of Object.entries(sample.hosts ?? {})) {
      let points = this._points.get(host);
      if (!points) {
        points = [];
        this._points.set(host, points);
      }
      points.push({ t, usage: usage ?? null });
    }
    for (const points of this._points.values()) {
      const keep = points.findIndex(p => p.t >= oldest);
      points.splice(0, keep < 0 ? points.length : keep);
    }
    this._message = null;
    this._changed.emit();
  }

  /** The samples of `host`, oldest first. */
  points(host: string): readonly IStatsPoint[] {
    return this._points.get(host) ?? [];
  }

  /** The newest use of `host`: null when it does not run or was not read yet. */
  latest(host: string): IContainerUsage | null {
    const points = this.points(host);
    return points.length ? points[points.length - 1].usage : null;
  }

  private _points = new Map<string, IStatsPoint[]>();
  private _end: number | null = null;
  private _message: string | null = null;
  private _changed = new Signal<this, void>(this);
}

export namespace StatsStream {
  export interface IOptions {
    client: ClusterClient;
    sessionId: string;
    model?: StatsModel;
    /** Pause before reopening a stream that failed or ended early (ms). */
    retryMs?: number;
  }
}

/**
 * One stats stream of a session feeding a {@link StatsModel}, from `start()`
 * until `dispose()` (which aborts the request), the session ends (`event:
 * end`) or the server refuses (e.g. 409: not running). A stream that breaks
 * otherwise is reopened after a pause.
 */
export class StatsStream implements IDisposable {
  constructor(options: StatsStream.IOptions) {
    this.client = options.client;
    this.sessionId = options.sessionId;
    this.model = options.model ?? new StatsModel();
    this._retryMs = options.retryMs ?? 5000;
  }

  readonly client: ClusterClient;
  readonly sessionId: string;
  readonly model: StatsModel;

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Whether the server said the session ended. */
  get ended(): boolean {
    return this._ended;
  }

  /** Open the stream (once). */
  start(): void {
    if (this._started || this._disposed) {
      return;
    }
    this._started = true;
    void this._loop();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._abort?.abort();
    this._abort = null;
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    this._wake?.();
  }

  private async _loop(): Promise<void> {
    while (!this._disposed && !this._ended) {
      const abort = new AbortController();
      this._abort = abort;
      const parser = new SSEParser();
      try {
        await this.client.streamStats(this.sessionId, {
          signal: abort.signal,
          onText: text => {
            for (const m of parser.push(text)) {
              this._onMessage(m.event, m.data);
            }
          }
        });
      } catch (error) {
        if (this._disposed) {
          return;
        }
        this.model.message = (error as Error).message;
        if (error instanceof ClusterAPIError && error.status >= 400) {
          return; // not running (409), gone (404), not allowed: no retry
        }
      }
      if (this._disposed || this._ended) {
        return;
      }
      await new Promise<void>(resolve => {
        this._wake = resolve;
        this._timer = setTimeout(() => {
          this._timer = null;
          resolve();
        }, this._retryMs);
      });
      this._wake = null;
    }
  }

  private _onMessage(event: string, data: string): void {
    if (this._disposed) {
      return;
    }
    if (event === 'end') {
      this._ended = true;
      let message = 'the session ended';
      try {
        message = JSON.parse(data).message || message;
      } catch {
        // keep the default
      }
      this.model.message = message;
      return;
    }
    if (event !== 'stats') {
      return;
    }
    try {
      this.model.add(JSON.parse(data) as IStatsSample);
    } catch {
      console.warn('jupyter-cluster: a malformed stats sample', data);
    }
  }

  private _retryMs: number;
  private _abort: AbortController | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _wake: (() => void) | null = null;
  private _started = false;
  private _ended = false;
  private _disposed = false;
}
