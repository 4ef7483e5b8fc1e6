/**
 * The collapsible "Recent sessions" section of the Cluster Sessions sidebar:
 * the last sessions that ended (`GET sessions?state=ended&limit=50`: the newest
 * page of the history, never the whole of it; read when the section is
 * opened, and again with its refresh button), each with its status, when it
 * ended and why, and a log button per container: the server keeps the
 * containers' logs after a session ends.
 */

import {
  caretDownIcon,
  caretRightIcon,
  listIcon,
  refreshIcon
} from '@jupyterlab/ui-components';
import * as React from 'react';

import { ClusterClient, ISession } from './api';
import { CommandIDs } from './commands';
import { IconButton, StatusBadge } from './controls';
import { getTrans } from './i18n';
import { jobSummary } from './job';
import { FINAL } from './sessions';
import { formatAge } from './units';

/** How many ended sessions the section reads: the newest launched, of which the
 * last to end are shown (a long-running one ended lately is among them unless 50
 * sessions were launched after it). */
export const RECENT_PAGE = 50;

/** The `limit` sessions that ended last, newest first. */
export function recentEnded(sessions: ISession[], limit = 10): ISession[] {
  const when = (s: ISession) => s.ended_at ?? s.updated_at ?? 0;
  return sessions
    .filter(s => FINAL.has(s.status) || !!s.ended_at)
    .sort((a, b) => when(b) - when(a))
    .slice(0, limit);
}

/** The section: closed at first; opening it reads the history. */
export function RecentSessions(props: {
  client: ClusterClient;
  run: (id: string, args?: any) => void;
  now: number;
  limit?: number;
}): JSX.Element {
  const trans = getTrans();
  const [open, setOpen] = React.useState(false);
  const [sessions, setSessions] = React.useState<ISession[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const mounted = React.useRef(true);
  React.useEffect(
    () => () => {
      mounted.current = false;
    },
    []
  );
  const load = () => {
    setError(null);
    props.client
      .listEnded(RECENT_PAGE)
      .then(page => {
        if (mounted.current) {
          setSessions(recentEnded(page, props.limit));
        }
      })
      .catch(e => {
        if (mounted.current) {
          setError((e as Error).message);
        }
      });
  };
  const toggle = () => {
    if (!open) {
      load();
    }
    setOpen(!open);
  };
  const Caret = open ? caretDownIcon : caretRightIcon;
  return (
    <section className="jp-ClusterRecent">
      <h3 className="jp-ClusterAgents-header jp-ClusterRecent-header">
        <button
          type="button"
          className="jp-ClusterAgents-toggle jp-ClusterRecent-toggle"
          aria-expanded={open}
          title={trans.__('Sessions that ended, with the logs kept of them')}
          onClick={toggle}
        >
          <Caret.react tag="span" className="jp-ClusterAgents-caret" />
          <span className="jp-ClusterAgents-title">
            {trans.__('Recent sessions')}
          </span>
        </button>
        {open && (
          <IconButton
            icon={refreshIcon}
            title={trans.__('Read the recent sessions again')}
            className="jp-ClusterRecent-refresh"
            onClick={load}
          />
        )}
      </h3>
      {open && error && (
        <div className="jp-ClusterAgents-error" role="status" title={error}>
          {trans.__('Could not read the sessions: %1', error)}
        </div>
      )}
      {open && !error && !sessions?.length && (
        <div className="jp-ClusterAgents-empty">
          {sessions
            ? trans.__('No session ended yet.')
            : trans.__('Reading sessions…')}
        </div>
      )}
      {open && !!sessions?.length && (
        <ul className="jp-ClusterRecent-list">
          {sessions.map(s => (
            <RecentItem
              key={s.id}
              session={s}
              run={props.run}
              now={props.now}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

/** One ended session: name, status, when it ended, why, its containers' logs. */
function RecentItem(props: {
  session: ISession;
  run: (id: string, args?: any) => void;
  now: number;
}): JSX.Element {
  const trans = getTrans();
  const { session, run } = props;
  return (
    <li
      className="jp-ClusterRecent-session"
      data-session-id={session.id}
      data-status={session.status}
    >
      <div className="jp-ClusterRecent-line">
        <span className="jp-ClusterSession-name" title={session.id}>
          {session.name}
        </span>
        <StatusBadge status={session.status} small />
      </div>
      <div className="jp-ClusterSession-meta jp-ClusterRecent-meta">
        {session.ended_at ? (
          <span title={new Date(session.ended_at * 1000).toLocaleString()}>
            {trans.__('ended %1 ago', formatAge(session.ended_at, props.now))}
          </span>
        ) : null}
        {session.job && (
          <span className="jp-ClusterSession-job" title={session.command ?? ''}>
            {jobSummary(session.job, props.now)}
          </span>
        )}
        {session.status_reason && (
          <span title={session.status_reason}>{session.status_reason}</span>
        )}
      </div>
      <div className="jp-ClusterRecent-logs">
        {session.containers.map(c => (
          <IconButton
            key={c.host}
            icon={listIcon}
            label={c.host}
            title={
              c.container_id
                ? trans.__('Show the log of %1 kept at termination', c.host)
                : trans.__('%1 never ran: it has no log', c.host)
            }
            className="jp-ClusterRecent-log"
            disabled={!c.container_id}
            onClick={() =>
              run(CommandIDs.openLogs, {
                sessionId: session.id,
                host: c.host
              })
            }
          />
        ))}
      </div>
    </li>
  );
}
