/**
 * Pieces of the launch form: labelled rows, selects, the data-folder picker,
 * the summary (total and room now) and small helpers.
 */

import { caretDownEmptyIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import { IAgent } from './api';
import { getTrans } from './i18n';
import { IProfileChoice } from './profiles';
import { describeTotals, IRoom, ITotals } from './room';

/** The hosts of a session of `size` containers: main1, sub1, … */
export function hostNames(size: number): string[] {
  const hosts = ['main1'];
  for (let i = 1; i < size; i++) {
    hosts.push(`sub${i}`);
  }
  return hosts;
}

/** `main1, sub1, sub2` (shortened for big sizes). */
export function hostsPreview(size: number): string {
  if (!Number.isInteger(size) || size < 1) {
    return '';
  }
  const hosts = hostNames(Math.min(size, 5));
  return size > 5
    ? `${hosts.slice(0, 4).join(', ')}, …, sub${size - 1}`
    : hosts.join(', ');
}

/** Checkboxes of the data folders, each mountable read-only. */
export function FolderPicker(props: {
  folders: string[];
  mounts: string[];
  onChange: (mounts: string[]) => void;
}): JSX.Element {
  const trans = getTrans();
  const { folders, mounts } = props;
  if (folders.length === 0) {
    return (
      <div className="jp-ClusterLaunch-note">
        {trans.__(
          'No data folders yet (create one with: jupyter cluster folder create NAME).'
        )}
      </div>
    );
  }
  return (
    <div className="jp-ClusterLaunch-folders">
      {folders.map(name => {
        const current = mounts.find(m => m.split(':')[0] === name);
        const readOnly = current?.endsWith(':ro') ?? false;
        const others = mounts.filter(m => m.split(':')[0] !== name);
        return (
          <div key={name} className="jp-ClusterLaunch-folder">
            <label>
              <input
                type="checkbox"
                name="mounts"
                value={name}
                checked={!!current}
                onChange={e =>
                  props.onChange(e.target.checked ? [...others, name] : others)
                }
              />
              {name}
            </label>
            <label className="jp-ClusterLaunch-readonly">
              <input
                type="checkbox"
                disabled={!current}
                checked={readOnly}
                onChange={e =>
                  props.onChange([
                    ...others,
                    e.target.checked ? `${name}:ro` : name
                  ])
                }
              />
              {trans.__('read-only')}
            </label>
          </div>
        );
      })}
    </div>
  );
}

/** The session's total and whether an agent has room for it now. */
export function Summary(props: {
  totals: ITotals | null;
  room: IRoom | null;
}): JSX.Element {
  const trans = getTrans();
  const { totals: t, room: fit } = props;
  return (
    <div className="jp-ClusterLaunch-summary" aria-live="polite">
      <div className="jp-ClusterLaunch-total">
        <span className="jp-ClusterLaunch-summaryLabel">
          {trans.__('Total')}
        </span>
        {t
          ? describeTotals(t)
          : trans.__('fix the values above to see the total')}
      </div>
      {fit && (
        <div
          className={`jp-ClusterLaunch-room ${fit.now ? 'jp-mod-ok' : 'jp-mod-warn'}`}
        >
          <span className="jp-ClusterLaunch-summaryLabel">
            {fit.now
              ? trans.__('Room now')
              : fit.refused
                ? trans.__('Refused')
                : trans.__('No room now')}
          </span>
          {fit.message}
        </div>
      )}
    </div>
  );
}

export function Row(props: {
  name: string;
  label: string;
  error?: string;
  help?: string;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <div
      className={`jp-ClusterLaunch-row${props.error ? ' jp-ClusterLaunch-invalid' : ''}`}
      data-field={props.name}
    >
      <label
        className="jp-ClusterLaunch-label"
        htmlFor={`jp-ClusterLaunch-${props.name}`}
        title={props.help}
      >
        {props.label}
      </label>
      <div className="jp-ClusterLaunch-control">
        {props.children}
        {props.error && (
          <div className="jp-ClusterLaunch-error" role="alert">
            {props.error}
          </div>
        )}
      </div>
    </div>
  );
}

export function Select(
  props: React.SelectHTMLAttributes<HTMLSelectElement>
): JSX.Element {
  return (
    <div className="jp-ClusterLaunch-selectWrap">
      <select {...props} />
      <caretDownEmptyIcon.react tag="span" className="jp-ClusterLaunch-caret" />
    </div>
  );
}

/**
 * The "Profile" select, the form's first field: choosing one fills the fields;
 * those the user's limits cannot launch are listed disabled, with the reason.
 */
export function ProfileSelect(props: {
  choices: IProfileChoice[];
  value: string;
  onChange: (name: string) => void;
}): JSX.Element {
  const trans = getTrans();
  return (
    <Row
      name="profile"
      label={trans.__('Profile')}
      help={trans.__('A named set of fields to start from; change any after.')}
    >
      <Select
        id="jp-ClusterLaunch-profile"
        name="profile"
        className={controlClass('select')}
        value={props.value}
        onChange={e => props.onChange(e.target.value)}
      >
        {props.choices.map(c => (
          <option
            key={c.value}
            value={c.value}
            disabled={c.disabled}
            title={c.reason || undefined}
          >
            {c.label}
          </option>
        ))}
      </Select>
    </Row>
  );
}

/** The class of a field's `input` (also a textarea) or `select`. */
export function controlClass(kind: 'input' | 'select', error?: string): string {
  return `jp-mod-styled jp-ClusterLaunch-${kind}${error ? ' jp-ClusterLaunch-inputInvalid' : ''}`;
}

/** A choice of a select. */
export function option(name: string): JSX.Element {
  return (
    <option key={name} value={name}>
      {name}
    </option>
  );
}

export function groupFree(
  agents: IAgent[],
  group: string
): { agents: number; cpu: number; mem: number; gpu: number } | null {
  const members = agents.filter(a => a.resource_group === group && a.reachable);
  if (!members.length) {
    return null;
  }
  return members.reduce(
    (sum, a) => ({
      agents: sum.agents + 1,
      cpu: sum.cpu + Math.max(0, a.free?.cpu ?? 0),
      mem: sum.mem + Math.max(0, a.free?.mem ?? 0),
      gpu: sum.gpu + Math.max(0, a.free?.gpu ?? 0)
    }),
    { agents: 0, cpu: 0, mem: 0, gpu: 0 }
  );
}
