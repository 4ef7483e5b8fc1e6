/**
 * The collapsible "Agents" section of the Cluster Sessions sidebar (./sidebar):
 * one row per agent (Docker host) with its resource group, a state badge
 * (available / unavailable), its free of total CPU, memory and GPUs, and, as
 * text, why it is unavailable (`message`) or what is wrong with it though it
 * works (`warning`, e.g. not in the same Docker Swarm as the others). It
 * re-renders after every read of its {@link AgentsModel} (./agents), which
 * polls the server; a failed read shows as one line in the section.
 */

import {
  caretDownIcon,
  caretRightIcon,
  UseSignal
} from '@jupyterlab/ui-components';
import * as React from 'react';

import { AgentsModel } from './agents';
import { IAgent } from './api';
import { StatusBadge } from './controls';
import { getTrans } from './i18n';
import { describeAmounts } from './sessionitem';

/** The section: a header that folds it, then the agents or why there are none. */
export function AgentsSection(props: { model: AgentsModel }): JSX.Element {
  const [expanded, setExpanded] = React.useState(true);
  return (
    <UseSignal signal={props.model.changed}>
      {() => (
        <AgentsBody
          model={props.model}
          expanded={expanded}
          onToggle={() => setExpanded(!expanded)}
        />
      )}
    </UseSignal>
  );
}

function AgentsBody(props: {
  model: AgentsModel;
  expanded: boolean;
  onToggle: () => void;
}): JSX.Element {
  const trans = getTrans();
  const { model, expanded } = props;
  const agents = model.agents;
  const available = agents.filter(a => a.reachable).length;
  const Caret = expanded ? caretDownIcon : caretRightIcon;
  let content: JSX.Element | null = null;
  if (agents.length) {
    content = (
      <ul className="jp-ClusterAgents-list">
        {agents.map(agent => (
          <AgentItem key={agent.id} agent={agent} />
        ))}
      </ul>
    );
  } else if (!model.error) {
    content = (
      <div className="jp-ClusterAgents-empty">
        {model.loaded ? trans.__('No agents.') : trans.__('Reading agents…')}
      </div>
    );
  }
  return (
    <section className="jp-ClusterAgents">
      <h3 className="jp-ClusterAgents-header">
        <button
          type="button"
          className="jp-ClusterAgents-toggle"
          aria-expanded={expanded}
          title={trans.__('Docker hosts that run the sessions’ containers')}
          onClick={props.onToggle}
        >
          <Caret.react tag="span" className="jp-ClusterAgents-caret" />
          <span className="jp-ClusterAgents-title">{trans.__('Agents')}</span>
          {model.loaded && (
            <span className="jp-ClusterAgents-summary">
              {trans.__('%1 of %2 available', available, agents.length)}
            </span>
          )}
        </button>
      </h3>
      {expanded && model.error && (
        <div
          className="jp-ClusterAgents-error"
          role="status"
          title={model.error}
        >
          {trans.__('Could not read the agents: %1', model.error)}
        </div>
      )}
      {expanded && content}
    </section>
  );
}

/** One agent: id, group, state, free of capacity, and why (as text). */
export function AgentItem(props: { agent: IAgent }): JSX.Element {
  const trans = getTrans();
  const { agent } = props;
  const state = agent.reachable ? 'available' : 'unavailable';
  const label = agent.reachable
    ? trans.__('available')
    : trans.__('unavailable');
  const reason = agent.reachable
    ? ''
    : agent.message || trans.__('it does not answer');
  const warning = agent.warning ?? '';
  const swarm = agent.swarm ?? '';
  const title = [
    trans.__(
      'Agent %1 (resource group %2): %3',
      agent.id,
      agent.resource_group,
      label
    ),
    swarm ? trans.__('Docker Swarm %1', swarm) : '',
    reason,
    warning
  ]
    .filter(Boolean)
    .join('\n');
  return (
    <li
      className="jp-ClusterAgent"
      data-agent={agent.id}
      data-state={state}
      title={title}
    >
      <div className="jp-ClusterAgent-line">
        <span className="jp-ClusterAgent-id">{agent.id}</span>
        <span
          className="jp-ClusterAgent-group"
          title={trans.__('Resource group')}
        >
          {agent.resource_group}
        </span>
        <span className="jp-ClusterAgent-spacer" />
        <StatusBadge status={state} label={label} small />
      </div>
      {agent.free && agent.capacity && (
        <div
          className="jp-ClusterAgent-detail"
          title={trans.__('Free of capacity')}
        >
          {trans.__('free %1', describeAmounts(agent.free, agent.capacity))}
        </div>
      )}
      {reason && (
        <div className="jp-ClusterAgent-reason jp-mod-error">{reason}</div>
      )}
      {warning && (
        <div className="jp-ClusterAgent-reason jp-mod-warn">{warning}</div>
      )}
    </li>
  );
}
