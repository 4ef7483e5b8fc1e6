/**
 * The launch form itself (React): every field of `launch-options`, the
 * explanation of both modes, the hosts a size gives, the total and the room
 * now, and each field's error.
 */

import * as React from 'react';

import { IAgent, IImage, ILaunchOptions } from './api';
import { field, ILaunchValues, LaunchErrors, modes } from './form';
import {
  FolderPicker,
  groupFree,
  hostsPreview,
  inputClass,
  Row,
  Select,
  selectClass,
  Summary
} from './formparts';
import { getTrans } from './i18n';
import { room, totals } from './room';
import { formatCpu, formatSize } from './units';

/** An error the server gave for the last launch (it names the field). */
export interface IServerError {
  field: string | null;
  message: string;
}

export interface IViewProps {
  options: ILaunchOptions;
  values: ILaunchValues;
  errors: LaunchErrors;
  touched: Set<string>;
  agents: IAgent[];
  images: IImage[];
  serverError: IServerError | null;
  onChange: (patch: Partial<ILaunchValues>) => void;
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
  const t = totals(values);
  const fit = t
    ? room(t, values.mode, values.resource_group, props.agents)
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

  const input = (
    name: 'size' | 'cpu' | 'mem' | 'shm' | 'gpu' | 'name',
    label: string,
    attrs: React.InputHTMLAttributes<HTMLInputElement> = {}
  ) => (
    <Row name={name} label={label} error={shown(name)} help={help(name)}>
      <input
        id={`jp-ClusterLaunch-${name}`}
        name={name}
        className={inputClass(shown(name))}
        value={values[name]}
        onChange={e => onChange({ [name]: e.target.value })}
        aria-invalid={!!shown(name)}
        {...attrs}
      />
    </Row>
  );

  return (
    <div className="jp-ClusterLaunch-form">
      {generalError && (
        <div className="jp-ClusterLaunch-serverError" role="alert">
          {generalError}
        </div>
      )}
      <Row
        name="image"
        label={trans.__('Image')}
        error={shown('image')}
        help={help('image')}
      >
        <Select
          id="jp-ClusterLaunch-image"
          name="image"
          className={selectClass(shown('image'))}
          value={values.image}
          onChange={e => onChange({ image: e.target.value })}
        >
          {images.map(name => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </Select>
        {missing.length > 0 && (
          <div className="jp-ClusterLaunch-note jp-mod-warn">
            {trans.__('Not present on agent %1.', missing.join(', '))}
          </div>
        )}
      </Row>

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

      <Row
        name="mounts"
        label={trans.__('Data folders')}
        error={shown('mounts')}
        help={help('mounts')}
      >
        <FolderPicker
          folders={folders}
          mounts={values.mounts}
          onChange={mounts => onChange({ mounts })}
        />
      </Row>

      <Row
        name="resource_group"
        label={trans.__('Resource group')}
        error={shown('resource_group')}
        help={help('resource_group')}
      >
        <Select
          id="jp-ClusterLaunch-resource_group"
          name="resource_group"
          className={selectClass(shown('resource_group'))}
          value={values.resource_group}
          onChange={e => onChange({ resource_group: e.target.value })}
        >
          {groups.map(name => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </Select>
        {group && (
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
        )}
      </Row>

      {input('name', trans.__('Name (optional)'), {
        placeholder: trans.__('a name to find it by'),
        spellCheck: false
      })}

      <Row
        name="bootstrap"
        label={trans.__('Bootstrap command')}
        error={shown('bootstrap')}
        help={help('bootstrap')}
      >
        <textarea
          id="jp-ClusterLaunch-bootstrap"
          name="bootstrap"
          className={inputClass(shown('bootstrap'))}
          rows={2}
          spellCheck={false}
          placeholder={trans.__('e.g. pip install --user -r requirements.txt')}
          value={values.bootstrap}
          onChange={e => onChange({ bootstrap: e.target.value })}
        />
      </Row>

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
