/**
 * The "Cluster admin" panel's sections below its sessions (./adminpanel): the
 * queue (waiting sessions per resource group, in the order the server lists
 * them, each with the server's waiting reason), the agents (./agentsview's
 * rows), usage per user (./usageview's table: allocated hours, the CPU time
 * used and a bar of CPU-hours each) and the
 * policies (each user's entry, GET limits/users/NAME, and the admin's own,
 * GET limits, as a table of their limits, run-time changes marked; a note
 * when this server has no policies routes).
 */

import * as React from 'react';

import { IPolicies, IUsageReport } from './adminapi';
import { AgentItem } from './agentsview';
import { IAgent, ISession } from './api';
import { getTrans } from './i18n';
import { describeShape } from './indicator';
import { UsageTable } from './usageview';

/**
 * The queue: PENDING sessions per resource group, each group in the order
 * `sessions` has them (the server's listing order, oldest first, which is the
 * FIFO queue's order); the server's waiting reason says more when it knows.
 */
export function queueOf(sessions: ISession[]): Map<string, ISession[]> {
  const queue = new Map<string, ISession[]>();
  for (const s of sessions) {
    if (s.status !== 'PENDING') {
      continue;
    }
    const group = s.resource_group ?? '';
    queue.set(group, [...(queue.get(group) ?? []), s]);
  }
  return queue;
}

export function QueueSection(props: { sessions: ISession[] }): JSX.Element {
  const trans = getTrans();
  const queue = queueOf(props.sessions);
  const waiting = [...queue.values()].reduce((n, q) => n + q.length, 0);
  return (
    <section className="jp-ClusterAdmin-queue">
      <h2>{trans.__('Queue (%1 waiting)', waiting)}</h2>
      {!waiting && (
        <p className="jp-ClusterAdmin-empty">{trans.__('Nothing waits.')}</p>
      )}
      {[...queue.entries()].map(([group, waits]) => (
        <div key={group} data-group={group}>
          <h3>{trans.__('Resource group %1', group || '?')}</h3>
          <ol className="jp-ClusterAdmin-queueList">
            {waits.map(s => (
              <li key={s.id} data-session-id={s.id}>
                <span className="jp-ClusterAdmin-queueName">{s.name}</span>{' '}
                <span className="jp-ClusterAdmin-owner">{s.owner ?? ''}</span>{' '}
                <span>{describeShape(s)}</span>
                <div className="jp-ClusterAdmin-reason">
                  {s.status_reason ?? ''}
                </div>
              </li>
            ))}
          </ol>
        </div>
      ))}
    </section>
  );
}

export function AgentsTable(props: {
  agents: IAgent[];
  error?: string;
}): JSX.Element {
  const trans = getTrans();
  return (
    <div className="jp-ClusterAdmin-agents">
      {props.error && <p className="jp-mod-error">{props.error}</p>}
      {!props.agents.length && !props.error && (
        <p className="jp-ClusterAdmin-empty">
          {trans.__('No agents read yet.')}
        </p>
      )}
      <ul className="jp-ClusterAgents-list">
        {props.agents.map(agent => (
          <AgentItem key={agent.id} agent={agent} />
        ))}
      </ul>
    </div>
  );
}

export function UsageSection(props: {
  usage: IUsageReport | null;
  user: string;
  error?: string;
}): JSX.Element {
  const trans = getTrans();
  const users = (props.usage?.users ?? []).filter(
    u => !props.user || u.user === props.user
  );
  return (
    <section className="jp-ClusterAdmin-usage">
      <h2>{trans.__('Usage (allocated, all time)')}</h2>
      {props.error && <p className="jp-mod-error">{props.error}</p>}
      {!users.length && !props.error && (
        <p className="jp-ClusterAdmin-empty">{trans.__('No usage yet.')}</p>
      )}
      {users.length > 0 && <UsageTable users={users} />}
    </section>
  );
}

export function PoliciesSection(props: {
  policies: IPolicies | null;
  user: string;
  error?: string;
}): JSX.Element {
  const trans = getTrans();
  const { policies } = props;
  const users = Object.entries(policies?.users ?? {}).filter(
    ([name]) => !props.user || name === props.user
  );
  return (
    <section className="jp-ClusterAdmin-policies">
      <h2>{trans.__('Policies')}</h2>
      {props.error && <p className="jp-mod-error">{props.error}</p>}
      {policies?.missing && (
        <p className="jp-ClusterAdmin-missing" data-missing="policies">
          {trans.__(
            'This server has no policies routes (GET limits): its limits are the launch form’s.'
          )}
        </p>
      )}
      {users.map(([name, entry]) => (
        <details key={name} data-user={name} open={users.length === 1}>
          <summary>{trans.__('User %1', name)}</summary>
          <PolicyTable entry={entry} />
        </details>
      ))}
      {policies && !policies.missing && (
        <details data-own="">
          <summary>{trans.__('Yours (GET limits)')}</summary>
          <PolicyTable entry={policies.limits} />
        </details>
      )}
      {policies && !policies.missing && (
        <p className="jp-ClusterAdmin-empty">
          {trans.__(
            'Group entries: limits/groups/NAME (jupyter cluster limits); the server lists no groups.'
          )}
        </p>
      )}
    </section>
  );
}

type Limits = Record<string, unknown>;

function isLimits(value: unknown): value is Limits {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One limit's value as a person reads it: 0 or null is no limit. */
export function limitText(value: unknown): string {
  if (value === 0 || value === null || value === undefined || value === '') {
    return getTrans().__('no limit');
  }
  if (Array.isArray(value)) {
    return value.length ? value.join(', ') : getTrans().__('any');
  }
  return String(value);
}

/**
 * A policy as a table: the effective limits (`effective` of a
 * limits/users/NAME entry, `limits` of GET limits), each changed at run time
 * marked, and where it comes from; anything else as the JSON it is.
 */
export function PolicyTable(props: { entry: unknown }): JSX.Element {
  const trans = getTrans();
  const entry = isLimits(props.entry) ? props.entry : {};
  const limits = isLimits(entry.effective)
    ? entry.effective
    : isLimits(entry.limits)
      ? entry.limits
      : null;
  if (limits === null) {
    return (
      <pre className="jp-ClusterAdmin-json">
        {JSON.stringify(props.entry, null, 2)}
      </pre>
    );
  }
  const changed = isLimits(entry.changed) ? entry.changed : {};
  const source = typeof entry.source === 'string' ? entry.source : '';
  return (
    <table className="jp-ClusterAdmin-table jp-ClusterAdmin-policy">
      <tbody>
        {source && (
          <tr>
            <th>{trans.__('from')}</th>
            <td>{source}</td>
          </tr>
        )}
        {Object.entries(limits).map(([key, value]) => (
          <tr
            key={key}
            data-key={key}
            data-changed={key in changed || undefined}
          >
            <th>{key}</th>
            <td>
              {limitText(value)}
              {key in changed && (
                <span className="jp-ClusterAdmin-changed">
                  {' '}
                  {trans.__('(changed at run time)')}
                </span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
