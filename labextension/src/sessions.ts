/**
 * The live list of cluster sessions, kept up to date from the server's events
 * stream (`GET cluster/api/events`): a snapshot when the stream opens, then one
 * event per change of a session or a container. The stream is reopened (with a
 * growing pause) when it ends or fails. Sessions that ended stay visible for a
 * little while, so that people see them end.
 */

import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  ClusterClient,
  ClusterEvent,
  IContainer,
  ISession,
  SessionStatus
} from './api';
import { SSEParser } from './sse';

/**
 * Statuses after which nothing more happens to a session (it only lingers in
 * the list); not ERROR, which can still be terminated.
 */
export const FINAL: ReadonlySet<SessionStatus> = new Set<SessionStatus>([
  'TERMINATED',
  'CANCELLED'
]);

/** Statuses in which a session's containers can be used. */
export const USABLE: ReadonlySet<SessionStatus> = new Set<SessionStatus>([
  'RUNNING',
  'RUNNING_DEGRADED'
]);

export namespace SessionsModel {
  export interface IOptions {
    client: ClusterClient;
    /** How long an ended session stays in the list (ms). */
    lingerMs?: number;
    /** First pause before reopening a failed stream (ms); it doubles up to maxRetryMs. */
    retryMs?: number;
    maxRetryMs?: number;
  }
}

/** Sessions by id, updated from events; emits `changed` after every update. */
export class SessionsModel implements IDisposable {
  constructor(options: SessionsModel.IOptions) {
    this.client = options.client;
    this._lingerMs = options.lingerMs ?? 8000;
    this._retryMs = options.retryMs ?? 1000;
    this._maxRetryMs = options.maxRetryMs ?? 30000;
  }

  readonly client: ClusterClient;

  /** Every known session, oldest first. */
  get sessions(): ISession[] {
    return [...this._sessions.values()].sort(
      (a, b) => (a.created_at ?? 0) - (b.created_at ?? 0)
    );
  }

  /** Whether the events stream is open now. */
  get connected(): boolean {
    return this._connected;
  }

  /** Why the last attempt to reach the server failed, or null. */
  get error(): string | null {
    return this._error;
  }

  /** Emitted after any change of the list or of the connection. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The session with this id, if known. */
  get(id: string): ISession | undefined {
    return this._sessions.get(id);
  }

  /** Start following the events stream (idempotent). */
  start(): void {
    if (this._running || this._disposed) {
      return;
    }
    this._running = true;
    void this._loop();
  }

  /** Read the list of sessions now (the stream also brings it). */
  async refresh(): Promise<void> {
    try {
      this._snapshot(await this.client.listSessions());
      this._error = null;
    } catch (error) {
      this._error = (error as Error).message;
    }
    this._changed.emit();
  }

  /** Apply one event of the stream. */
  apply(event: ClusterEvent): void {
    if (event.type === 'snapshot') {
      this._snapshot(event.sessions);
    } else if (event.type === 'session') {
      this.upsert(event.session);
      return;
    } else if (event.type === 'container') {
      const session = this._sessions.get(event.session_id);
      if (!session) {
        return;
      }
      const containers = session.containers.map(c =>
        c.host === event.host ? this._container(c, event) : c
      );
      if (!containers.some(c => c.host === event.host)) {
        containers.push(
          this._container(
            { host: event.host, role: 'sub', status: event.status },
            event
          )
        );
      }
      this._sessions.set(session.id, { ...session, containers });
    }
    this._changed.emit();
  }

  /** Add or replace a session (e.g. the answer of a launch). */
  upsert(session: ISession): void {
    if (this._disposed) {
      return;
    }
    const known = this._sessions.get(session.id);
    if (known && (known.updated_at ?? 0) > (session.updated_at ?? 0)) {
      return; // an older copy (e.g. a POST answer after the stream's news)
    }
    this._sessions.set(session.id, session);
    if (FINAL.has(session.status)) {
      this._linger(session.id);
    }
    this._changed.emit();
  }

  /** Forget a session now. */
  remove(id: string): void {
    if (this._sessions.delete(id)) {
      this._changed.emit();
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._running = false;
    this._abort?.abort();
    for (const timer of this._timers.values()) {
      clearTimeout(timer);
    }
    this._timers.clear();
    if (this._retryTimer) {
      clearTimeout(this._retryTimer);
    }
    this._wake?.();
    Signal.clearData(this);
  }

  private _container(
    container: IContainer,
    event: Extract<ClusterEvent, { type: 'container' }>
  ): IContainer {
    return {
      ...container,
      status: event.status,
      status_reason: event.status_reason ?? container.status_reason,
      container_id:
        event.container_id === undefined
          ? container.container_id
          : event.container_id,
      agent: event.agent === undefined ? container.agent : event.agent
    };
  }

  private _snapshot(sessions: ISession[]): void {
    const ids = new Set(sessions.map(s => s.id));
    for (const [id, session] of this._sessions) {
      // Sessions that ended stay until their linger time is over.
      if (!ids.has(id) && !FINAL.has(session.status)) {
        this._sessions.delete(id);
      }
    }
    for (const session of sessions) {
      this._sessions.set(session.id, session);
    }
  }

  private _linger(id: string): void {
    if (this._timers.has(id)) {
      return;
    }
    this._timers.set(
      id,
      setTimeout(() => {
        this._timers.delete(id);
        const session = this._sessions.get(id);
        if (session && FINAL.has(session.status)) {
          this.remove(id);
        }
      }, this._lingerMs)
    );
  }

  private async _loop(): Promise<void> {
    let pause = this._retryMs;
    while (this._running && !this._disposed) {
      this._abort = new AbortController();
      const parser = new SSEParser();
      let opened = false;
      try {
        await this.client.streamEvents({
          signal: this._abort.signal,
          onText: text => {
            if (!opened) {
              opened = true;
              pause = this._retryMs;
              this._connected = true;
              this._error = null;
            }
            for (const message of parser.push(text)) {
              this._message(message.event, message.data);
            }
          }
        });
        this._error = null;
      } catch (error) {
        if (this._disposed) {
          return;
        }
        this._error = (error as Error).message;
      }
      this._connected = false;
      this._changed.emit();
      if (!this._running || this._disposed) {
        return;
      }
      await new Promise<void>(resolve => {
        this._wake = resolve;
        this._retryTimer = setTimeout(resolve, pause);
      });
      pause = Math.min(pause * 2, this._maxRetryMs);
    }
  }

  private _message(event: string, data: string): void {
    if (!['snapshot', 'session', 'container'].includes(event)) {
      return;
    }
    let parsed: ClusterEvent;
    try {
      parsed = { ...JSON.parse(data), type: event } as ClusterEvent;
    } catch {
      console.warn('jupyter-cluster: a malformed event', data);
      return;
    }
    this.apply(parsed);
  }

  private _sessions = new Map<string, ISession>();
  private _changed = new Signal<this, void>(this);
  private _timers = new Map<string, ReturnType<typeof setTimeout>>();
  private _retryTimer: ReturnType<typeof setTimeout> | null = null;
  private _wake: (() => void) | null = null;
  private _abort: AbortController | null = null;
  private _connected = false;
  private _error: string | null = null;
  private _running = false;
  private _disposed = false;
  private _lingerMs: number;
  private _retryMs: number;
  private _maxRetryMs: number;
}
