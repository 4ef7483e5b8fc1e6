/**
 * The rows of the Cluster Sessions sidebar: a session (status and reason, mode,
 * size, age, kernel, actions) and its containers (host, status, agent,
 * resources, logs and terminal buttons, and while expanded and running, live
 * graphs of their resource use: ./statsview).
 */

import {
  caretDownIcon,
  caretRightIcon,
  listIcon,
  notebookIcon,
  stopIcon,
  terminalIcon
} from '@jupyterlab/ui-components';
import * as React from 'react';

import { ClusterClient, IContainer, IResources, ISession, IUsage } from './api';
import { appsOf } from './apps';
import { CommandIDs } from './commands';
import { IconButton, StatusBadge } from './controls';
import { getTrans } from './i18n';
import { jobSummary } from './job';
import { FINAL, USABLE } from './sessions';
import { StatsModel } from './stats';
import { ContainerStats, useStats } from './statsview';
import { formatAge, formatCpu, formatLeft, formatSize } from './units';

/** One line of resources per container: `0.5 CPU · 1g mem · 64m shm`. */
export function describeResources(
  session: ISession,
  container?: IContainer
): string {
  const r = session.resources;
  return r ? describeAmounts(r, undefined, container?.gpu_ids) : '';
}

/**
 * Amounts as one line, `2 CPU · 1g mem · 64m shm · 1 GPU (0)`; with `of`, each
 * is a part of a whole, e.g. an agent's free of capacity: `3/4 CPU · 6g/8g mem`.
 * Shared memory and GPUs only show when there are some.
 */
export function describeAmounts(
  amounts: IResources,
  of?: IUsage,
  gpuIds?: string[]
): string {
  const pair = (
    value: number,
    whole: number | undefined,
    f: (n: number) => string = String
  ) => (whole === undefined ? f(value) : `${f(value)}/${f(whole)}`);
  const parts = [
    `${pair(amounts.cpu, of?.cpu, formatCpu)} CPU`,
    `${pair(amounts.mem, of?.mem, formatSize)} mem`
  ];
  if (amounts.shm) {
    parts.push(`${formatSize(amounts.shm)} shm`);
  }
  if (amounts.gpu || of?.gpu) {
    const ids = gpuIds?.length ? ` (${gpuIds.join(',')})` : '';
    parts.push(`${pair(amounts.gpu, of?.gpu)} GPU${ids}`);
  }
  return parts.join(' · ');
}

/** One session: header, meta, reason, kernel, actions and its containers. */
export function SessionItem(props: {
  session: ISession;
  now: number;
  expanded: boolean;
  onToggle: () => void;
  run: (id: string, args?: any) => void;
  /** Reads the containers' use while expanded and running (no graphs without). */
  client?: ClusterClient;
}): JSX.Element {
  const trans = getTrans();
  const { session, run } = props;
  const final = FINAL.has(session.status);
  const usable = USABLE.has(session.status);
  const stats = useStats(props.client, session.id, props.expanded && usable);
  const Caret = props.expanded ? caretDownIcon : caretRightIcon;
  const kernel = kernelText(session);
  const args = { sessionId: session.id };
  const size = session.size ?? session.containers.length;
  return (
    <li
      className={`jp-ClusterSession${final ? ' jp-mod-ended' : ''}`}
      data-session-id={session.id}
      data-status={session.status}
    >
      <div
        className="jp-ClusterSession-header"
        role="button"
        tabIndex={0}
        aria-expanded={props.expanded}
        onClick={props.onToggle}
        onKeyDown={e => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            props.onToggle();
          }
        }}
      >
        <Caret.react tag="span" className="jp-ClusterSession-caret" />
        <span className="jp-ClusterSession-name" title={session.id}>
          {session.name}
        </span>
        <StatusBadge status={session.status} />
      </div>
      <div className="jp-ClusterSession-meta">
        <span title={trans.__('Cluster mode')}>{session.mode}</span>
        <span title={trans.__('Number of containers')}>
          {trans._n('%1 container', '%1 containers', size)}
        </span>
        {session.created_at !== undefined && (
          <span title={new Date(session.created_at * 1000).toLocaleString()}>
            {trans.__('%1 old', formatAge(session.created_at, props.now))}
          </span>
        )}
        {typeof session.idle_deadline === 'number' && (
          <span
            className="jp-ClusterSession-idle"
            title={trans.__(
              'Idle: terminated at %1 unless its kernel runs something or a terminal is open',
              new Date(session.idle_deadline * 1000).toLocaleTimeString()
            )}
          >
            {trans.__(
              'idle, ends in %1',
              formatLeft(session.idle_deadline, props.now)
            )}
          </span>
        )}
      </div>
      {session.job && (
        <div className="jp-ClusterSession-job" title={session.command ?? ''}>
          {jobSummary(session.job, props.now)}
        </div>
      )}
      {session.status_reason && (
        <div className="jp-ClusterSession-reason" title={session.status_reason}>
          {session.status_reason}
        </div>
      )}
      {kernel && <div className="jp-ClusterSession-kernel">{kernel}</div>}
      <div className="jp-ClusterSession-actions">
        <IconButton
          icon={notebookIcon}
          label={trans.__('Notebook')}
          title={
            session.kernel_state === 'running'
              ? trans.__('Open a new notebook on this session’s kernel')
              : trans.__('This session has no running kernel')
          }
          className="jp-ClusterSession-notebook"
          disabled={session.kernel_state !== 'running' || !usable}
          onClick={() => run(CommandIDs.openNotebook, args)}
        />
        <IconButton
          icon={terminalIcon}
          label={trans.__('Terminals')}
          title={trans.__('Open a terminal in every container, as tabs')}
          className="jp-ClusterSession-terminals"
          disabled={!usable || !session.containers.some(isRunning)}
          onClick={() => run(CommandIDs.openAllTerminals, args)}
        />
        <IconButton
          icon={stopIcon}
          label={
            session.status === 'PENDING'
              ? trans.__('Cancel')
              : trans.__('Terminate')
          }
          title={trans.__('Terminate the session: remove all its containers')}
          className="jp-ClusterSession-terminate"
          disabled={final || session.status === 'TERMINATING'}
          onClick={() => run(CommandIDs.terminate, args)}
        />
      </div>
      {usable && appsOf(session).length > 0 && (
        <AppList session={session} run={run} />
      )}
      {props.expanded && (
        <ul className="jp-ClusterSession-containers">
          {session.containers.map(container => (
            <ContainerItem
              key={container.host}
              session={session}
              container={container}
              run={run}
              stats={stats}
            />
          ))}
        </ul>
      )}
    </li>
  );
}

/** The session's declared apps: a Lab tab each, or a browser tab (↗). */
function AppList(props: {
  session: ISession;
  run: (id: string, args?: any) => void;
}): JSX.Element {
  const trans = getTrans();
  const { session, run } = props;
  return (
    <ul className="jp-ClusterSession-apps">
      {appsOf(session).map(([name, port]) => {
        const args = { sessionId: session.id, port, name };
        return (
          <li key={name} className="jp-ClusterApp-item" data-app={name}>
            <button
              className="jp-ClusterApp-open jp-mod-styled"
              title={trans.__(
                'Open %1 (port %2 in main1) as a tab',
                name,
                port
              )}
              onClick={() => run(CommandIDs.openApp, args)}
            >
              {`${name} :${port}`}
            </button>
            <button
              className="jp-ClusterApp-browser jp-mod-styled"
              title={trans.__('Open %1 in a new browser tab', name)}
              aria-label={trans.__('Open %1 in a new browser tab', name)}
              onClick={() =>
                run(CommandIDs.openApp, { ...args, browser: true })
              }
            >
              ↗
            </button>
          </li>
        );
      })}
    </ul>
  );
}

function ContainerItem(props: {
  session: ISession;
  container: IContainer;
  run: (id: string, args?: any) => void;
  stats: StatsModel | null;
}): JSX.Element {
  const trans = getTrans();
  const { session, container, run } = props;
  const args = { sessionId: session.id, host: container.host };
  const running = isRunning(container) && USABLE.has(session.status);
  return (
    <li
      className="jp-ClusterContainer"
      data-host={container.host}
      data-status={container.status}
    >
      <div className="jp-ClusterContainer-line">
        <span className="jp-ClusterContainer-host">{container.host}</span>
        <StatusBadge status={container.status} small />
        <span className="jp-ClusterContainer-spacer" />
        <IconButton
          icon={listIcon}
          title={trans.__('Show the log of %1', container.host)}
          className="jp-ClusterContainer-logs"
          disabled={!container.container_id}
          onClick={() => run(CommandIDs.openLogs, args)}
        />
        <IconButton
          icon={terminalIcon}
          title={trans.__('Open a terminal in %1', container.host)}
          className="jp-ClusterContainer-terminal"
          disabled={!running}
          onClick={() => run(CommandIDs.openTerminal, args)}
        />
      </div>
      <div className="jp-ClusterContainer-detail">
        <span title={trans.__('Agent')}>
          {container.agent ?? trans.__('no agent yet')}
        </span>
        <span>{describeResources(session, container)}</span>
      </div>
      {props.stats && (
        <ContainerStats
          model={props.stats}
          host={container.host}
          cpus={session.resources?.cpu}
        />
      )}
      {container.status_reason && (
        <div className="jp-ClusterContainer-reason">
          {container.status_reason}
        </div>
      )}
    </li>
  );
}

function isRunning(container: IContainer): boolean {
  return container.status === 'RUNNING';
}

function kernelText(session: ISession): string {
  const trans = getTrans();
  switch (session.kernel_state) {
    case 'waiting':
      return trans.__('kernel: starts when the session runs');
    case 'starting':
      return trans.__('kernel: starting in main1…');
    case 'running':
      return trans.__('kernel: running in main1');
    case 'failed':
      return session.kernel_reason
        ? trans.__('kernel failed: %1', session.kernel_reason)
        : trans.__('kernel failed');
    case 'gone':
      return trans.__('kernel: shut down');
    default:
      return '';
  }
}
