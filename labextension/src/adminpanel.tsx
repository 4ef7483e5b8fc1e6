/**
 * The "Cluster admin" panel, a main-area tab for admins (opened by the command
 * ./admincommand registers only for them): every user's sessions with their
 * owner, filtered by user, each one endable with a reason its owner reads;
 * then the queue in order, the agents, usage per user and the policies
 * (./adminsections). Sessions are live (the sidebar's ./sessions model, which
 * for an admin holds everyone's); the rest is read through ./adminapi when the
 * panel opens, on Refresh, and every {@link ADMIN_POLL_MS} while it is shown.
 */

import { InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import { ReactWidget, refreshIcon, UseSignal } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { AdminModel, endSession } from './adminapi';
import {
  AgentsTable,
  PoliciesSection,
  QueueSection,
  UsageSection
} from './adminsections';
import { ISession } from './api';
import { IconButton, StatusBadge } from './controls';
import { getTrans } from './i18n';
import { describeShape } from './indicator';
import { FINAL, SessionsModel } from './sessions';
import { formatAge } from './units';

/** How often agents, usage and policies are read while the panel shows (ms). */
export const ADMIN_POLL_MS = 15000;

/** Every distinct owner of `sessions`, sorted. */
export function ownersOf(sessions: ISession[]): string[] {
  return [...new Set(sessions.map(s => s.owner ?? ''))].filter(Boolean).sort();
}

/** Ask for a reason, then end the session; false when the admin cancelled. */
export async function askAndEnd(
  admin: AdminModel,
  session: ISession
): Promise<boolean> {
  const trans = getTrans();
  const answer = await InputDialog.getText({
    title: trans.__('End %1 of %2?', session.name, session.owner ?? '?'),
    label: trans.__('Reason (the owner reads it on the session)'),
    placeholder: trans.__('e.g. maintenance of the GPU hosts'),
    okLabel: trans.__('End session')
  });
  if (!answer.button.accept) {
    return false;
  }
  try {
    await endSession(admin.client, session.id, answer.value ?? '');
  } catch (error) {
    await showErrorMessage(
      trans.__('Could not end the session'),
      (error as Error).message
    );
    return false;
  }
  return true;
}

/** The panel (a ReactWidget in a main-area tab). */
export class ClusterAdminPanel extends ReactWidget {
  constructor(
    readonly sessions: SessionsModel,
    readonly admin: AdminModel
  ) {
    super();
    this.id = 'jp-cluster-admin';
    this.addClass('jp-ClusterAdmin');
    const trans = getTrans();
    this.title.label = trans.__('Cluster admin');
    this.title.caption = trans.__(
      "Every user's cluster sessions, the queue, agents, usage and policies"
    );
    this.title.closable = true;
  }

  /** The user shown ('' for everyone). */
  get user(): string {
    return this._user;
  }

  set user(user: string) {
    this._user = user;
    this.update();
  }

  dispose(): void {
    this._stop();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._refresh();
    this._stop();
    this._timer = setInterval(() => void this._refresh(), ADMIN_POLL_MS);
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._stop();
  }

  render(): JSX.Element {
    return (
      <UseSignal signal={this.sessions.changed}>
        {() => (
          <UseSignal signal={this.admin.changed}>
            {() => (
              <AdminView
                sessions={this.sessions.sessions}
                admin={this.admin}
                user={this._user}
                onUser={user => (this.user = user)}
              />
            )}
          </UseSignal>
        )}
      </UseSignal>
    );
  }

  /** Read agents, usage and the policies of every user seen. */
  private _refresh(): Promise<void> {
    return this.admin.refresh(ownersOf(this.sessions.sessions));
  }

  private _stop(): void {
    if (this._timer !== null) {
      clearInterval(this._timer);
      this._timer = null;
    }
  }

  private _user = '';
  private _timer: ReturnType<typeof setInterval> | null = null;
}

/** The whole view: the user filter, then each section. */
export function AdminView(props: {
  sessions: ISession[];
  admin: AdminModel;
  user: string;
  onUser: (user: string) => void;
}): JSX.Element {
  const trans = getTrans();
  const { admin, user } = props;
  const active = props.sessions.filter(s => !FINAL.has(s.status));
  const shown = user ? active.filter(s => s.owner === user) : active;
  const owners = ownersOf(active);
  if (user && !owners.includes(user)) {
    owners.push(user);
  }
  return (
    <div className="jp-ClusterAdmin-body">
      <div className="jp-ClusterAdmin-toolbar">
        <label>
          {trans.__('User')}{' '}
          <select
            className="jp-ClusterAdmin-user"
            value={user}
            onChange={e => props.onUser(e.target.value)}
          >
            <option value="">{trans.__('All users')}</option>
            {owners.map(o => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <IconButton
          icon={refreshIcon}
          title={trans.__('Read agents, usage and policies again')}
          label={trans.__('Refresh')}
          onClick={() => void admin.refresh(owners)}
        />
      </div>
      <h2>{trans.__('Sessions (%1)', shown.length)}</h2>
      <SessionsTable sessions={shown} admin={admin} />
      <QueueSection sessions={shown} />
      <h2>{trans.__('Agents')}</h2>
      <AgentsTable agents={admin.agents} error={admin.errors.agents} />
      <UsageSection
        usage={admin.usage}
        user={user}
        error={admin.errors.usage}
      />
      <PoliciesSection
        policies={admin.policies}
        user={user}
        error={admin.errors.policies}
      />
    </div>
  );
}

/** Active sessions, one row each, with an "End…" button. */
export function SessionsTable(props: {
  sessions: ISession[];
  admin: AdminModel;
}): JSX.Element {
  const trans = getTrans();
  if (!props.sessions.length) {
    return (
      <p className="jp-ClusterAdmin-empty">{trans.__('No active sessions.')}</p>
    );
  }
  const now = Date.now();
  return (
    <table className="jp-ClusterAdmin-table jp-ClusterAdmin-sessions">
      <thead>
        <tr>
          <th>{trans.__('Session')}</th>
          <th>{trans.__('Owner')}</th>
          <th>{trans.__('Status')}</th>
          <th>{trans.__('Shape')}</th>
          <th>{trans.__('Group')}</th>
          <th>{trans.__('Age')}</th>
          <th>{trans.__('Reason')}</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.sessions.map(s => (
          <tr key={s.id} data-session-id={s.id} data-owner={s.owner ?? ''}>
            <td title={s.id}>{s.name}</td>
            <td className="jp-ClusterAdmin-owner">{s.owner ?? ''}</td>
            <td>
              <StatusBadge status={s.status} small />
            </td>
            <td>{describeShape(s)}</td>
            <td>{s.resource_group ?? ''}</td>
            <td>{s.created_at ? formatAge(s.created_at, now) : ''}</td>
            <td className="jp-ClusterAdmin-reason">{s.status_reason ?? ''}</td>
            <td>
              <button
                type="button"
                className="jp-ClusterAdmin-end jp-mod-styled jp-mod-warn"
                disabled={s.status === 'TERMINATING'}
                onClick={() => void askAndEnd(props.admin, s)}
              >
                {trans.__('End…')}
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
