/**
 * Small controls the sidebar's sections share: a status badge and an icon
 * button (with an optional label) that does not toggle the row it sits in.
 */

import { LabIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

/** A status as a coloured badge (`jp-ClusterStatus-<status>`), or its `label`. */
export function StatusBadge(props: {
  status: string;
  label?: string;
  small?: boolean;
}): JSX.Element {
  return (
    <span
      className={`jp-ClusterStatus jp-ClusterStatus-${props.status}${props.small ? ' jp-mod-small' : ''}`}
    >
      {props.label ?? props.status}
    </span>
  );
}

export function IconButton(props: {
  icon: LabIcon;
  title: string;
  label?: string;
  className?: string;
  disabled?: boolean;
  onClick: () => void;
}): JSX.Element {
  const Icon = props.icon;
  return (
    <button
      type="button"
      className={`jp-ClusterButton ${props.className ?? ''}`}
      title={props.title}
      aria-label={props.title}
      disabled={props.disabled}
      onClick={e => {
        e.stopPropagation();
        props.onClick();
      }}
    >
      <Icon.react tag="span" className="jp-ClusterButton-icon" />
      {props.label && (
        <span className="jp-ClusterButton-label">{props.label}</span>
      )}
    </button>
  );
}
