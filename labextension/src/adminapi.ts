/**
 * What the "Cluster admin" panel (./adminpanel) reads and does through the
 * REST API: who the caller is (`GET me`: only admins get the panel), every
 * user's usage (`GET usage`), agents (`GET agents`), the policies (`GET
 * limits` and each known user's `GET limits/users/{name}`, when the server
 * has them) and
 * ending a user's session with a reason the owner reads (`DELETE
 * sessions/{id}?reason=`). {@link AdminModel} holds the last read of each
 * (sessions come live from the sidebar's ./sessions model instead) and is
 * refreshed by the panel while it is shown.
 */

import { ISignal, Signal } from '@lumino/signaling';

import { ClusterAPIError, ClusterClient, IAgent, IResources } from './api';

/** `GET me`: who the caller is and whether it administers the cluster. */
export interface ICaller {
  name: string;
  admin: boolean;
  groups: string[];
}

/** Resource-hours of one user or session in a period (`GET usage`). */
export interface IUsageTotals {
  sessions: number;
  running_hours: number;
  cpu_hours: number;
  mem_gib_hours: number;
  gpu_hours: number;
  /** CPU seconds the containers measurably used (absent from older servers). */
  cpu_seconds_used?: number;
}

/** `GET usage`: per user and per session. */
export interface IUsageReport {
  since: number | null;
  until: number | null;
  now: number;
  users: (IUsageTotals & { user: string })[];
  sessions: (IUsageTotals & {
    id: string;
    name: string;
    owner: string;
    status: string;
    size: number;
    resources: IResources;
    created_at?: number;
    ended_at?: number | null;
  })[];
}

/**
 * The policies as the server gives them: `limits` (`GET limits`: the caller's
 * own, resolved, with where it comes from) and `users` (each user's entry,
 * `GET limits/users/{name}`: configured, changed at run time, effective),
 * each whatever JSON the server sends; `missing` when this server has no
 * policies routes (404).
 */
export interface IPolicies {
  missing: boolean;
  limits: unknown;
  users: Record<string, unknown>;
}

/** Who the caller is (`GET me`); null when the server cannot say (older servers). */
export async function whoAmI(
  client: Pick<ClusterClient, 'request'>
): Promise<ICaller | null> {
  return (await optional(client, ['me'])) as ICaller | null;
}

/** End (or cancel) another user's session; its owner reads `reason` on it. */
export function endSession(
  client: Pick<ClusterClient, 'request'>,
  sessionId: string,
  reason: string
): Promise<void> {
  const query = reason.trim()
    ? `?reason=${encodeURIComponent(reason.trim())}`
    : '';
  return client.request<void>(
    ['sessions', sessionId],
    { method: 'DELETE' },
    query
  );
}

/** Read a route the server may not have: null when it has not (404). */
async function optional(
  client: Pick<ClusterClient, 'request'>,
  parts: string[]
): Promise<unknown> {
  try {
    return await client.request<unknown>(parts);
  } catch (error) {
    if (error instanceof ClusterAPIError && error.status === 404) {
      return null;
    }
    throw error;
  }
}

/** The caller's policy and each of `users`' entry (see {@link IPolicies}). */
export async function readPolicies(
  client: Pick<ClusterClient, 'request'>,
  users: string[] = []
): Promise<IPolicies> {
  const limits = await optional(client, ['limits']);
  const entries: Record<string, unknown> = {};
  if (limits !== null) {
    const found = await Promise.all(
      users.map(user => optional(client, ['limits', 'users', user]))
    );
    users.forEach((user, i) => {
      if (found[i] !== null) {
        entries[user] = found[i];
      }
    });
  }
  return { missing: limits === null, limits, users: entries };
}

/** The admin panel's data but sessions; emits `changed` after every read. */
export class AdminModel {
  constructor(readonly client: Pick<ClusterClient, 'request' | 'agents'>) {}

  agents: IAgent[] = [];
  usage: IUsageReport | null = null;
  policies: IPolicies | null = null;
  /** What failed in the last read, per part (agents, usage, policies). */
  errors: Record<string, string> = {};

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Read agents, usage and policies again (each may fail on its own): the
   * policies of `users` (the panel's) and of everyone in the usage report.
   */
  async refresh(users: string[] = []): Promise<void> {
    const errors: Record<string, string> = {};
    const take = async <T>(
      part: string,
      read: () => Promise<T>,
      keep: (value: T) => void
    ) => {
      try {
        keep(await read());
      } catch (error) {
        errors[part] = (error as Error).message;
      }
    };
    await Promise.all([
      take(
        'agents',
        () => this.client.agents(),
        v => (this.agents = v)
      ),
      take(
        'usage',
        () => this.client.request<IUsageReport>(['usage']),
        v => (this.usage = v)
      )
    ]);
    const known = new Set(users);
    for (const u of this.usage?.users ?? []) {
      known.add(u.user);
    }
    await take(
      'policies',
      () => readPolicies(this.client, [...known].sort()),
      v => (this.policies = v)
    );
    this.errors = errors;
    this._changed.emit();
  }

  private _changed = new Signal<this, void>(this);
}
