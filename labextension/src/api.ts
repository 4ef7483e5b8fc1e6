/**
 * A small client of the jupyter-cluster server extension's REST API, under
 * `{baseUrl}cluster/api/` (see `jupyter_cluster/server/openapi.json`); its models are
 * in ./models, re-exported here. Streams (a followed log, the events) are read
 * with `fetch`, so they carry the same authentication as every other request.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import {
  IAgent,
  IImage,
  ILaunchCheck,
  ILaunchOptions,
  ILaunchRequest,
  IResourceGroup,
  ISession,
  IStatsSample,
  ITerminalModel
} from './models';

export * from './models';

/** A failed request: the server's message (what was wrong and what to do). */
export class ClusterAPIError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly field: string | null = null
  ) {
    super(message);
    this.name = 'ClusterAPIError';
  }
}

/** Where the API lives relative to the server's base URL. */
export const API_PATH = 'cluster/api';

/** Talks to the server extension; one per application. */
export class ClusterClient {
  constructor(
    readonly serverSettings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  /** The absolute URL of an API route, e.g. `url('sessions', id)`. */
  url(...parts: string[]): string {
    return URLExt.join(
      this.serverSettings.baseUrl,
      API_PATH,
      ...parts.map(encodeURIComponent)
    );
  }

  /** A request that must succeed; its JSON answer (undefined for 204). */
  async request<T>(
    parts: string[],
    init: RequestInit = {},
    query = ''
  ): Promise<T> {
    const response = await this.fetch(parts, init, query);
    if (response.status === 204) {
      return undefined as T;
    }
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A request that must succeed; the raw response (for streams). */
  async fetch(
    parts: string[],
    init: RequestInit = {},
    query = ''
  ): Promise<Response> {
    const url = this.url(...parts) + query;
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(
        url,
        init,
        this.serverSettings
      );
    } catch (error) {
      if ((error as Error)?.name === 'AbortError') {
        throw error;
      }
      throw new ClusterAPIError(
        `The Jupyter server did not answer (${(error as Error).message}). Is it still running?`,
        0
      );
    }
    if (!response.ok) {
      throw await errorOf(response);
    }
    return response;
  }

  listSessions(all = false): Promise<ISession[]> {
    return this.request<ISession[]>(['sessions'], {}, all ? '?all=1' : '');
  }

  /** The `limit` ended sessions launched last, newest first (one page of the history). */
  listEnded(limit: number): Promise<ISession[]> {
    return this.request<ISession[]>(
      ['sessions'],
      {},
      `?state=ended&limit=${encodeURIComponent(limit)}`
    );
  }

  getSession(ref: string): Promise<ISession> {
    return this.request<ISession>(['sessions', ref]);
  }

  launch(body: ILaunchRequest): Promise<ISession> {
    return this.request<ISession>(['sessions'], {
      method: 'POST',
      body: JSON.stringify(body)
    });
  }

  /** What this launch would meet now (`POST sessions?dry_run=1`); makes nothing. */
  checkLaunch(
    body: ILaunchRequest,
    signal?: AbortSignal
  ): Promise<ILaunchCheck> {
    return this.request<ILaunchCheck>(
      ['sessions'],
      { method: 'POST', body: JSON.stringify(body), signal },
      '?dry_run=1'
    );
  }

  terminate(ref: string): Promise<void> {
    return this.request<void>(['sessions', ref], { method: 'DELETE' });
  }

  agents(): Promise<IAgent[]> {
    return this.request<IAgent[]>(['agents']);
  }

  resourceGroups(): Promise<IResourceGroup[]> {
    return this.request<IResourceGroup[]>(['resource-groups']);
  }

  images(): Promise<IImage[]> {
    return this.request<IImage[]>(['images']);
  }

  launchOptions(): Promise<ILaunchOptions> {
    return this.request<ILaunchOptions>(['launch-options']);
  }

  openTerminal(ref: string, host: string): Promise<ITerminalModel> {
    return this.request<ITerminalModel>(
      ['sessions', ref, 'containers', host, 'terminals'],
      { method: 'POST', body: '{}' }
    );
  }

  /** A container's whole log (or its last `tail` lines) as text. */
  async logs(ref: string, host: string, tail?: number): Promise<string> {
    const response = await this.fetch(
      ['sessions', ref, 'containers', host, 'logs'],
      {},
      tail === undefined ? '' : `?tail=${tail}`
    );
    return response.text();
  }

  /**
   * Stream a container's log: `onText` gets each chunk until the container ends,
   * the stream fails or `signal` aborts it.
   */
  async streamLogs(
    ref: string,
    host: string,
    options: {
      tail?: number;
      signal?: AbortSignal;
      onText: (text: string) => void;
    }
  ): Promise<void> {
    const query = `?follow=1${options.tail === undefined ? '' : `&tail=${options.tail}`}`;
    const response = await this.fetch(
      ['sessions', ref, 'containers', host, 'logs'],
      { signal: options.signal, cache: 'no-store' },
      query
    );
    await readText(response, options.onText);
  }

  /** One sample of each container's resource use. */
  stats(ref: string): Promise<IStatsSample> {
    return this.request<IStatsSample>(['sessions', ref, 'stats']);
  }

  /**
   * Open a session's stats stream (`event: stats` every few seconds, `event:
   * end` when the session ends); `onText` gets its raw text until it ends.
   */
  async streamStats(
    ref: string,
    options: { signal?: AbortSignal; onText: (text: string) => void }
  ): Promise<void> {
    const response = await this.fetch(
      ['sessions', ref, 'stats'],
      {
        signal: options.signal,
        cache: 'no-store',
        headers: { Accept: 'text/event-stream' }
      },
      '?follow=1'
    );
    await readText(response, options.onText);
  }

  /** Open the events stream; `onText` gets its raw text until it ends. */
  async streamEvents(options: {
    signal?: AbortSignal;
    onText: (text: string) => void;
  }): Promise<void> {
    const response = await this.fetch(
      ['events'],
      {
        signal: options.signal,
        cache: 'no-store',
        headers: { Accept: 'text/event-stream' }
      },
      ''
    );
    await readText(response, options.onText);
  }
}

/** Read a response's body as text, chunk by chunk as it arrives. */
export async function readText(
  response: Response,
  onText: (text: string) => void
): Promise<void> {
  const body = response.body;
  if (!body || typeof body.getReader !== 'function') {
    const text = await response.text();
    if (text) {
      onText(text);
    }
    return;
  }
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      const text = decoder.decode(value, { stream: true });
      if (text) {
        onText(text);
      }
    }
    const rest = decoder.decode();
    if (rest) {
      onText(rest);
    }
  } finally {
    reader.releaseLock();
  }
}

/** The error of a failed response, with the server's message when it sent one. */
export async function errorOf(response: Response): Promise<ClusterAPIError> {
  let message = '';
  let field: string | null = null;
  try {
    const text = await response.text();
    try {
      const data = JSON.parse(text);
      message = String(data.message ?? '');
      field = data.field ?? null;
    } catch {
      message = text.trim().slice(0, 500);
    }
  } catch {
    // no body
  }
  if (!message) {
    message = hint(response.status, response.statusText);
  }
  return new ClusterAPIError(message, response.status, field);
}

function hint(status: number, text: string): string {
  switch (status) {
    case 403:
      return 'Not allowed: the server refused the request (log in again?).';
    case 404:
      return 'Not found: is the jupyter_cluster server extension enabled? (jupyter server extension list)';
    default:
      return `The server answered ${status} ${text}`.trim();
  }
}
