/**
 * The "Cluster Sessions" sidebar: every session with its status (and why it is
 * pending), mode, size and age; expanded, its containers with host, agent,
 * status and resources. Actions run the extension's commands, so they behave
 * as the same commands in the palette do. It re-renders whenever the sessions
 * model changes (the server's events stream) and every few seconds for ages.
 * An expanded running session shows live graphs of its containers' use
 * (./statsview), read only while the sidebar is on screen.
 * Below the sessions, the "Recent sessions" section (./recent) lists sessions
 * that ended, with their kept logs, and the "Agents" section (./agentsview) shows every agent and
 * its state; it is polled only while the sidebar is visible, and read again
 * soon after any session changes.
 */

import {
  addIcon,
  ReactWidget,
  refreshIcon,
  UseSignal
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { AgentsModel } from './agents';
import { AgentsSection } from './agentsview';
import { CommandIDs } from './commands';
import { IconButton } from './controls';
import { getTrans } from './i18n';
import { clusterIcon } from './icons';
import { SessionsModel } from './sessions';
import { RecentSessions } from './recent';
import { SessionItem } from './sessionitem';

/** The sidebar widget. */
export class ClusterSidebar extends ReactWidget {
  /**
   * `agents` is made from the sessions model's client (and disposed with the
   * sidebar) when not given.
   */
  constructor(
    readonly model: SessionsModel,
    readonly commands: CommandRegistry,
    agents?: AgentsModel
  ) {
    super();
    this._ownsAgents = !agents;
    this.agents = agents ?? new AgentsModel({ client: model.client });
    model.changed.connect(this._onSessionsChanged, this);
    this.id = 'jp-cluster-sessions';
    this.addClass('jp-ClusterSidebar');
    const trans = getTrans();
    this.title.icon = clusterIcon;
    this.title.caption = trans.__('Cluster Sessions');
  }

  /** The agents of the "Agents" section. */
  readonly agents: AgentsModel;

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this._startClock();
    }
  }

  protected onBeforeDetach(msg: Message): void {
    this._stopClock();
    super.onBeforeDetach(msg);
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._startClock();
    this.update(); // graphs read again
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._stopClock();
    this.update(); // graphs stop reading
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stopClock();
    this.model.changed.disconnect(this._onSessionsChanged, this);
    if (this._ownsAgents) {
      this.agents.dispose();
    }
    super.dispose();
  }

  protected render(): JSX.Element {
    return (
      <UseSignal signal={this.model.changed}>
        {() => (
          <SidebarView
            model={this.model}
            agents={this.agents}
            commands={this.commands}
            now={Date.now()}
            visible={this.isVisible}
          />
        )}
      </UseSignal>
    );
  }

  /** While visible: tick the ages and poll the agents. */
  private _startClock(): void {
    if (this._clock === null) {
      this._clock = setInterval(() => this.update(), 5000);
    }
    this.agents.start();
  }

  private _stopClock(): void {
    if (this._clock !== null) {
      clearInterval(this._clock);
      this._clock = null;
    }
    this.agents.stop();
  }

  private _onSessionsChanged(): void {
    this.agents.refreshSoon();
  }

  private _clock: ReturnType<typeof setInterval> | null = null;
  private _ownsAgents: boolean;
}

function SidebarView(props: {
  model: SessionsModel;
  agents: AgentsModel;
  commands: CommandRegistry;
  now: number;
  /** Whether the sidebar is on screen: only then graphs read the use. */
  visible: boolean;
}): JSX.Element {
  const trans = getTrans();
  const { model, commands } = props;
  const [collapsed, setCollapsed] = React.useState<Set<string>>(new Set());
  const toggle = (id: string) => {
    const next = new Set(collapsed);
    if (next.has(id)) {
      next.delete(id);
    } else {
      next.add(id);
    }
    setCollapsed(next);
  };
  const run = (id: string, args: any = {}) => {
    void commands.execute(id, args);
  };
  const sessions = model.sessions;
  return (
    <div className="jp-ClusterSidebar-body">
      <div className="jp-ClusterSidebar-header">
        <h2 className="jp-ClusterSidebar-title">
          {trans.__('Cluster Sessions')}
        </h2>
        <span
          className={`jp-ClusterSidebar-live ${model.connected ? 'jp-mod-live' : ''}`}
          title={
            model.connected
              ? trans.__('Updates live from the server')
              : trans.__('Not receiving updates: %1', model.error ?? '…')
          }
        />
        <IconButton
          icon={addIcon}
          label={trans.__('New')}
          title={trans.__('Launch a new cluster session')}
          className="jp-ClusterSidebar-launch"
          onClick={() => run(CommandIDs.launch)}
        />
        <IconButton
          icon={refreshIcon}
          title={trans.__('Refresh the list of sessions')}
          className="jp-ClusterSidebar-refresh"
          onClick={() => run(CommandIDs.refresh)}
        />
      </div>
      {!model.connected && model.error && (
        <div className="jp-ClusterSidebar-error" role="alert">
          {model.error}
        </div>
      )}
      {sessions.length === 0 ? (
        <div className="jp-ClusterSidebar-empty">
          <p>{trans.__('No cluster sessions.')}</p>
          <button
            className="jp-Button jp-mod-styled jp-mod-accept"
            onClick={() => run(CommandIDs.launch)}
          >
            {trans.__('Launch a cluster session…')}
          </button>
        </div>
      ) : (
        <ul className="jp-ClusterSidebar-sessions">
          {sessions.map(session => (
            <SessionItem
              key={session.id}
              session={session}
              now={props.now}
              expanded={!collapsed.has(session.id)}
              onToggle={() => toggle(session.id)}
              run={run}
              client={props.visible ? model.client : undefined}
            />
          ))}
        </ul>
      )}
      <RecentSessions client={model.client} run={run} now={props.now} />
      <AgentsSection model={props.agents} />
    </div>
  );
}
