/**
 * The launch form itself (React): every field of `launch-options`, the
 * explanation of both modes, the hosts a size gives, the total and the room
 * now, and each field's error.
 */

import * as React from 'react';

import { IAgent, IImage, ILaunchOptions } from './api';
import { field, ILaunchValues, LaunchErrors, modes } from './form';
import {
  controlClass,
  FolderPicker,
  groupFree,
  hostsPreview,
  option,
  ProfileSelect,
  Row,
  Select,
  Summary
} from './formparts';
import { getTrans } from './i18n';
import { profileChoices } from './profiles';
import { IRoom, room, totals } from './room';
import { formatCpu, formatSize } from './units';

/** An error the server gave for the last launch (it names the field). */
export interface IServerError {
  field: string | null;
  message: string;
}

/** The fields typed or chosen as text. */
type TextField = Exclude<
  keyof ILaunchValues,
  'mode' | 'mounts' | 'start_kernel' | 'carried'
>;

export interface IViewProps {
  options: ILaunchOptions;
  values: ILaunchValues;
  errors: LaunchErrors;
  touched: Set<string>;
  agents: IAgent[];
  images: IImage[];
  serverError: IServerError | null;
  /** The server's dry run for these values, once it answered (else the estimate). */
  checked?: IRoom | null;
  onChange: (patch: Partial<ILaunchValues>) => void;
  /** The launch profile chosen ('' for none) and choosing one. */
  profile?: string;
  onProfile?: (name: string) => void;
}

/** The form; `onChange` gets each edit. */
export function LaunchFormView(props: IViewProps): JSX.Element {
  const trans = getTrans();
  const { options, values, errors, touched, onChange } = props;
  const shown = (name: keyof ILaunchValues): string | undefined => {
    if (props.serverError?.field === name) {
      return props.serverError.message;
    }
    return touched.has(name) ? errors[name] : undefined;
  };
  const help = (name: string) => field(options, name)?.help ?? '';
  const images = field(options, 'image')?.choices ?? [];
  const groups = field(options, 'resource_group')?.choices ?? [];
  const folders = field(options, 'mounts')?.choices ?? [];
  const maxSize = options.limits.max_size ?? field(options, 'size')?.maximum;
  const profiles = profileChoices(options);
  const t = totals(values);
  const fit = t
    ? (props.checked ??
      room(t, values.mode, values.resource_group, props.agents))
    : null;
  const image = props.images.find(i => i.name === values.image);
  const missing = image?.agents
    ? Object.entries(image.agents)
        .filter(([, present]) => present === false)
        .map(([agent]) => agent)
    : [];
  const group = groupFree(props.agents, values.resource_group);
  const generalError =
    props.serverError &&
    (!props.serverError.field ||
      !(props.serverError.field in values) ||
      props.serverError.field === 'body')
      ? props.serverError.message
      : null;

  /** A row's name, error and help. */
  const rowProps = (name: keyof ILaunchValues) => ({
    name,
    error: shown(name),
    help: help(name)
  });
  /** What a text field's control takes: id, name, class, value, onChange. */
  const control = (name: TextField, kind: 'input' | 'select' = 'input') => ({
    id: `jp-ClusterLaunch-${name}`,
    name,
    className: controlClass(kind, shown(name)),
    value: values[name],
    onChange: (e: React.ChangeEvent<{ value: string }>) =>
      onChange({ [name]: e.target.value })
  });
  const input = (
    name: 'size' | 'cpu' | 'mem' | 'shm' | 'gpu' | 'name' | 'max_lifetime',
    label: string,
    attrs: React.InputHTMLAttributes<HTMLInputElement> = {}
  ) => (
    <Row {...rowProps(name)} label={label}>
      <input {...control(name)} aria-invalid={!!shown(name)} {...attrs} />
    </Row>
  );
  const select = (
    name: 'image' | 'resource_group',
    label: string,
    choices: string[],
    note: React.ReactNode
  ) => (
    <Row {...rowProps(name)} label={label}>
      <Select {...control(name, 'select')}>{choices.map(option)}</Select>
      {note}
    </Row>
  );

  return (
    <div className="jp-ClusterLaunch-form">
      {generalError && (
        <div className="jp-ClusterLaunch-serverError" role="alert">
          {generalError}
        </div>
      )}
      {profiles.length > 1 && (
        <ProfileSelect
          choices={profiles}
          value={props.profile ?? ''}
          onChange={name => props.onProfile?.(name)}
        />
      )}
      {select(
        'image',
        trans.__('Image'),
        images,
        missing.length > 0 && (
          <div className="jp-ClusterLaunch-note jp-mod-warn">
            {trans.__('Not present on agent %1.', missing.join(', '))}
          </div>
        )
      )}

      <fieldset className="jp-ClusterLaunch-modes">
        <legend>{trans.__('Cluster mode')}</legend>
        {modes().map(mode => (
          <label key={mode.value} className="jp-ClusterLaunch-mode">
            <input
              type="radio"
              name="mode"
              value={mode.value}
              checked={values.mode === mode.value}
              onChange={() => onChange({ mode: mode.value })}
            />
            <span className="jp-ClusterLaunch-modeLabel">{mode.label}</span>
            <span className="jp-ClusterLaunch-modeHelp">{mode.help}</span>
          </label>
        ))}
      </fieldset>

      {input('size', trans.__('Cluster size'), {
        type: 'number',
        min: 1,
        max: maxSize,
        step: 1
      })}
      <div className="jp-ClusterLaunch-hosts">
        {hostsPreview(t?.size ?? NaN)}
      </div>

      <div className="jp-ClusterLaunch-section">
        {trans.__('Per container')}
      </div>
      <div className="jp-ClusterLaunch-grid">
        {input('cpu', trans.__('CPU'), {
          type: 'number',
          min: 0.001,
          max: options.limits.max_cpu,
          step: 'any'
        })}
        {input('mem', trans.__('Memory'), {
          placeholder: trans.__('e.g. 2g'),
          spellCheck: false
        })}
        {input('shm', trans.__('Shared memory'), {
          placeholder: trans.__('e.g. 64m'),
          spellCheck: false
        })}
        {input('gpu', trans.__('GPU'), {
          type: 'number',
          min: 0,
          max: options.limits.max_gpu,
          step: 1
        })}
      </div>

      <Summary totals={t} room={fit} />

      <Row {...rowProps('mounts')} label={trans.__('Data folders')}>
        <FolderPicker
          folders={folders}
          mounts={values.mounts}
          onChange={mounts => onChange({ mounts })}
        />
      </Row>

      {select(
        'resource_group',
        trans.__('Resource group'),
        groups,
        group && (
          <div className="jp-ClusterLaunch-note">
            {trans._n(
              '%1 agent; free now: %2 CPU, %3 memory, %4 GPU',
              '%1 agents; free now: %2 CPU, %3 memory, %4 GPU',
              group.agents,
              formatCpu(group.cpu),
              formatSize(group.mem),
              group.gpu
            )}
          </div>
        )
      )}

      {input('name', trans.__('Name (optional)'), {
        placeholder: trans.__('a name to find it by'),
        spellCheck: false
      })}

      <Row {...rowProps('bootstrap')} label={trans.__('Bootstrap command')}>
        <textarea
          {...control('bootstrap')}
          rows={2}
          spellCheck={false}
          placeholder={trans.__('e.g. pip install --user -r requirements.txt')}
        />
      </Row>

      <Row {...rowProps('command')} label={trans.__('Batch command')}>
        <textarea
          {...control('command')}
          rows={2}
          spellCheck={false}
          placeholder={trans.__(
            'run in main1; the session ends when it exits (empty: interactive)'
          )}
        />
      </Row>

      {input('max_lifetime', trans.__('Maximum lifetime'), {
        placeholder: trans.__('e.g. 30m, 2h (empty: no limit)'),
        spellCheck: false
      })}

      <Row {...rowProps('env')} label={trans.__('Environment variables')}>
        <textarea
          {...control('env')}
          rows={2}
          spellCheck={false}
          autoComplete="off"
          placeholder={trans.__('KEY=VALUE, one a line')}
        />
      </Row>

      {field(options, 'apps') && (
        <Row {...rowProps('apps')} label={trans.__('Apps')}>
          <textarea
            {...control('apps')}
            rows={2}
            spellCheck={false}
            autoComplete="off"
            placeholder={trans.__(
              'NAME=PORT, one a line, e.g. tensorboard=6006'
            )}
          />
        </Row>
      )}

      <label className="jp-ClusterLaunch-kernel">
        <input
          type="checkbox"
          name="start_kernel"
          checked={values.start_kernel}
          onChange={e => onChange({ start_kernel: e.target.checked })}
        />
        {trans.__('Start a kernel in main1 and open a notebook on it')}
      </label>
    </div>
  );
}
