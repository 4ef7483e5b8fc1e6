/**
 * The live list of agents (Docker hosts) for the Cluster Sessions sidebar's
 * "Agents" section (./agentsview, owned by ./sidebar). Agents are not in the
 * events stream, so this model polls `GET cluster/api/agents`: every
 * {@link AGENTS_POLL_MS} while started (the sidebar starts it while it is
 * visible and stops it when hidden or disposed), and soon after a session
 * changes ({@link AgentsModel.refreshSoon}, debounced), since sessions take and
 * give back agents' resources. At most one request is in flight at a time.
 */

import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ClusterClient, IAgent } from './api';

/** How often the agents are read while the sidebar is visible (ms). */
export const AGENTS_POLL_MS = 10000;

/** How long after a session's change the agents are read again (ms). */
export const AGENTS_DEBOUNCE_MS = 1000;

export namespace AgentsModel {
  export interface IOptions {
    client: Pick<ClusterClient, 'agents'>;
    /** The pause between two reads (ms); {@link AGENTS_POLL_MS} by default. */
    pollMs?: number;
    /** The pause after {@link AgentsModel.refreshSoon} (ms). */
    debounceMs?: number;
  }
}

/** The agents as last read; emits `changed` after every read, good or not. */
export class AgentsModel implements IDisposable {
  constructor(options: AgentsModel.IOptions) {
    this._client = options.client;
    this._pollMs = options.pollMs ?? AGENTS_POLL_MS;
    this._debounceMs = options.debounceMs ?? AGENTS_DEBOUNCE_MS;
  }

  /** The agents of the last good read (empty before the first one). */
  get agents(): IAgent[] {
    return this._agents;
  }

  /** Whether a read has succeeded yet. */
  get loaded(): boolean {
    return this._loaded;
  }

  /** Why the last read failed, or null when it succeeded. */
  get error(): string | null {
    return this._error;
  }

  /** Whether it is polling now. */
  get running(): boolean {
    return this._running;
  }

  /** Emitted after every read. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Read the agents now, then every poll interval, until stopped (idempotent). */
  start(): void {
    if (this._running || this._disposed) {
      return;
    }
    this._running = true;
    void this._read();
  }

  /** Stop polling: no timer is left; a read in flight still lands. */
  stop(): void {
    this._running = false;
    this._clear();
  }

  /** Read again shortly, e.g. after a session changed (only while running). */
  refreshSoon(): void {
    if (!this._running) {
      return;
    }
    if (this._busy) {
      this._again = true;
      return;
    }
    if (this._timer !== null && this._due <= Date.now() + this._debounceMs) {
      return; // a read is due soon enough already
    }
    this._schedule(this._debounceMs);
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this.stop();
    Signal.clearData(this);
  }

  private async _read(): Promise<void> {
    if (this._busy) {
      this._again = true;
      return;
    }
    this._clear();
    this._busy = true;
    try {
      this._agents = await this._client.agents();
      this._loaded = true;
      this._error = null;
    } catch (error) {
      this._error = (error as Error)?.message || String(error);
    } finally {
      this._busy = false;
    }
    if (this._disposed) {
      return;
    }
    this._changed.emit();
    const again = this._again;
    this._again = false;
    this._schedule(again ? this._debounceMs : this._pollMs);
  }

  private _schedule(ms: number): void {
    this._clear();
    if (!this._running || this._disposed) {
      return;
    }
    this._due = Date.now() + ms;
    this._timer = setTimeout(() => {
      this._timer = null;
      void this._read();
    }, ms);
  }

  private _clear(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _client: Pick<ClusterClient, 'agents'>;
  private _pollMs: number;
  private _debounceMs: number;
  private _agents: IAgent[] = [];
  private _loaded = false;
  private _error: string | null = null;
  private _changed = new Signal<this, void>(this);
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _due = 0;
  private _busy = false;
  private _again = false;
  private _running = false;
  private _disposed = false;
}
