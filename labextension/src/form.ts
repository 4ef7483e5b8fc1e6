/**
 * The launch form's logic, without any UI: its values (from the server's
 * `launch-options`, the user's settings and what was typed), their validation
 * against the server's limits and the request they make. Mirrors the checks of
 * `jupyter_cluster/core/launch_options.py`, so that mistakes show before anything is
 * sent. The totals and the room on agents are in ./room; the environment and
 * apps fields' `KEY=VALUE` lines are read by ./envfield and ./appsfield.
 */

import {
  ClusterMode,
  ILaunchField,
  ILaunchOptions,
  ILaunchRequest
} from './api';
import { appsRequest, appsText, parseApps } from './appsfield';
import { envRequest, envText, parseEnv } from './envfield';
import { getTrans } from './i18n';
import { formatCpu, formatSize, parseCpu, parseSize } from './units';

/** What the form holds; numbers and sizes stay text while being typed. */
export interface ILaunchValues {
  image: string;
  size: string;
  mode: ClusterMode;
  cpu: string;
  mem: string;
  shm: string;
  gpu: string;
  /** Data folders, `NAME` or `NAME:ro`. */
  mounts: string[];
  resource_group: string;
  name: string;
  bootstrap: string;
  /** A batch job's command, run in main1; the session ends when it exits. */
  command: string;
  /** How long the session may live, e.g. `30m`, `2h` (empty: no limit). */
  max_lifetime: string;
  /** Environment variables, `KEY=VALUE` one a line. */
  env: string;
  /** Web apps in main1, `NAME=PORT` one a line (./appsfield). */
  apps: string;
  /** Start a kernel in main1 and open a notebook on it. */
  start_kernel: boolean;
  /**
   * A chosen profile's fields the form has no control for (e.g. `retries`),
   * sent with the launch as the profile gives them (./profiles).
   */
  carried?: Partial<ILaunchRequest>;
}

/** Per field, what is wrong with it. */
export type LaunchErrors = Partial<Record<keyof ILaunchValues, string>>;

/** A cluster mode for people: its name and a one-line explanation. */
export interface IModeChoice {
  value: ClusterMode;
  label: string;
  help: string;
}

/** The modes, each with a one-line explanation. */
export function modes(): IModeChoice[] {
  const trans = getTrans();
  return [
    {
      value: 'single-node',
      label: trans.__('Single-node'),
      help: trans.__(
        'All on one agent; waits (PENDING) until one agent has room for all.'
      )
    },
    {
      value: 'multi-node',
      label: trans.__('Multi-node'),
      help: trans.__(
        'One agent if one has room, else spread over the group’s agents.'
      )
    }
  ];
}

/** The field of `options` called `name`. */
export function field(
  options: ILaunchOptions,
  name: string
): ILaunchField | undefined {
  return options.fields.find(f => f.name === name);
}

function text(value: unknown, fallback = ''): string {
  if (value === null || value === undefined) {
    return fallback;
  }
  return String(value);
}

/**
 * The form's first values: the server's defaults, overridden by the user's own
 * defaults (settings) where those are allowed choices.
 */
export function initialValues(
  options: ILaunchOptions,
  user: Partial<ILaunchRequest> = {},
  startKernel = true
): ILaunchValues {
  const merged: { [key: string]: any } = { ...options.defaults };
  for (const [key, value] of Object.entries(user)) {
    if (value === undefined || value === null || value === '') {
      continue;
    }
    const f = field(options, key);
    if (!f) {
      continue;
    }
    if (
      f.choices &&
      f.type === 'string' &&
      !f.choices.includes(String(value))
    ) {
      continue; // e.g. an image this server does not allow
    }
    if (f.type === 'array' && Array.isArray(value)) {
      const names = f.choices ?? [];
      merged[key] = value.filter(v => names.includes(String(v).split(':')[0]));
      continue;
    }
    merged[key] = value;
  }
  const mode = merged.mode === 'multi-node' ? 'multi-node' : 'single-node';
  return {
    image: text(merged.image),
    size: text(merged.size, '1'),
    mode,
    cpu: text(merged.cpu, '1'),
    mem:
      typeof merged.mem === 'number'
        ? formatSize(merged.mem)
        : text(merged.mem),
    shm:
      typeof merged.shm === 'number'
        ? formatSize(merged.shm)
        : text(merged.shm),
    gpu: text(merged.gpu, '0'),
    mounts: Array.isArray(merged.mounts) ? merged.mounts.map(String) : [],
    resource_group: text(merged.resource_group),
    name: text(merged.name),
    bootstrap: text(merged.bootstrap),
    command: text(merged.command),
    max_lifetime: text(merged.max_lifetime),
    env: envText(merged.env),
    apps: appsText(merged.apps),
    start_kernel: startKernel
  };
}

/** Seconds, or a number with s, m, h or d (as the server reads max_lifetime). */
const DURATION = /^\s*\d+(\.\d+)?\s*[smhd]?\s*$/i;

/** A whole number typed as text, or null. */
export function wholeNumber(value: string): number | null {
  return /^\s*\d+\s*$/.test(value) ? parseInt(value, 10) : null;
}

/** What is wrong with the values, per field (empty when they can be sent). */
export function validate(
  values: ILaunchValues,
  options: ILaunchOptions
): LaunchErrors {
  const trans = getTrans();
  const errors: LaunchErrors = {};
  const limits = options.limits;

  /** A value that must be one of the field's choices (when it has some). */
  const choice = (
    name: 'image' | 'resource_group',
    missing: string,
    wrong: (choices: string[]) => string
  ) => {
    const choices = field(options, name)?.choices ?? [];
    if (!values[name]) {
      errors[name] = missing;
    } else if (choices.length && !choices.includes(values[name])) {
      errors[name] = wrong(choices);
    }
  };

  choice('image', trans.__('Choose an image.'), images =>
    trans.__('Not an allowed image; use one of %1.', images.join(', '))
  );

  const maxSize = limits.max_size ?? field(options, 'size')?.maximum ?? 1;
  const size = wholeNumber(values.size);
  if (size === null || size < 1 || size > maxSize) {
    errors.size = trans.__('A whole number from 1 to %1.', maxSize);
  }

  const maxCpu = limits.max_cpu ?? field(options, 'cpu')?.maximum;
  const cpu = parseCpu(values.cpu);
  if (cpu === null) {
    errors.cpu = trans.__(
      'A number of CPUs above 0, such as 0.5 or 2 (steps of 0.001).'
    );
  } else if (maxCpu !== undefined && cpu > maxCpu + 1e-9) {
    errors.cpu = trans.__('At most %1 CPUs per container.', formatCpu(maxCpu));
  }

  for (const name of ['mem', 'shm'] as const) {
    const f = field(options, name);
    const min = f?.minimum_bytes ?? 0;
    const max =
      f?.maximum_bytes ?? limits[name === 'mem' ? 'max_mem' : 'max_shm'];
    const bytes = parseSize(values[name]);
    if (bytes === null) {
      errors[name] = trans.__('A size such as 512m or 2g.');
    } else if (bytes < min || (max !== undefined && bytes > max)) {
      errors[name] =
        max === undefined
          ? trans.__('At least %1 per container.', formatSize(min))
          : trans.__(
              'From %1 to %2 per container.',
              formatSize(min),
              formatSize(max)
            );
    }
  }

  const memBytes = parseSize(values.mem);
  const shmBytes = parseSize(values.shm);
  if (
    !errors.mem &&
    !errors.shm &&
    memBytes !== null &&
    shmBytes !== null &&
    shmBytes > memBytes
  ) {
    // /dev/shm is charged to the container's memory: the server refuses more
    errors.shm = trans.__(
      'At most the memory per container (%1): shared memory is part of it.',
      formatSize(memBytes)
    );
  }

  const maxGpu = limits.max_gpu ?? field(options, 'gpu')?.maximum ?? 0;
  const gpu = wholeNumber(values.gpu);
  if (gpu === null || gpu > maxGpu) {
    errors.gpu = trans.__('A whole number from 0 to %1.', maxGpu);
  }

  if (!modes().some(m => m.value === values.mode)) {
    errors.mode = trans.__('Choose single-node or multi-node.');
  }

  const folders = field(options, 'mounts')?.choices ?? [];
  const unknown = values.mounts.filter(m => !folders.includes(m.split(':')[0]));
  if (unknown.length) {
    errors.mounts = trans.__('No data folder named %1.', unknown.join(', '));
  }

  choice('resource_group', trans.__('Choose a resource group.'), () =>
    trans.__('No resource group %1.', values.resource_group)
  );

  const name = values.name.trim();
  const pattern = field(options, 'name')?.pattern;
  if (name && pattern && !new RegExp(pattern).test(name)) {
    errors.name = trans.__(
      "Letters, digits, '.', '_' and '-', starting with a letter or digit (at most 64)."
    );
  }

  const maxBootstrap = field(options, 'bootstrap')?.max_length;
  if (maxBootstrap !== undefined && values.bootstrap.length > maxBootstrap) {
    errors.bootstrap = trans.__('At most %1 characters.', maxBootstrap);
  }

  if (values.max_lifetime.trim() && !DURATION.test(values.max_lifetime)) {
    errors.max_lifetime = trans.__('Give a duration such as 90s, 30m or 2h.');
  }

  const env = parseEnv(values.env);
  if (typeof env === 'string') {
    errors.env = env;
  }
  const apps = field(options, 'apps') ? parseApps(values.apps) : {};
  if (typeof apps === 'string') {
    errors.apps = apps;
  }
  return errors;
}

/** The body of `POST sessions` for valid values. */
export function toRequest(values: ILaunchValues): ILaunchRequest {
  return {
    ...values.carried,
    image: values.image,
    size: parseInt(values.size, 10),
    mode: values.mode,
    cpu: parseCpu(values.cpu) ?? values.cpu,
    mem: values.mem.trim(),
    shm: values.shm.trim(),
    gpu: parseInt(values.gpu, 10),
    mounts: values.mounts,
    resource_group: values.resource_group,
    name: values.name.trim() || null,
    bootstrap: values.bootstrap.trim() ? values.bootstrap : null,
    command: values.command.trim() ? values.command : null,
    max_lifetime: values.max_lifetime.trim() || null,
    env: envRequest(values.env),
    ...appsRequest(values.apps),
    start_kernel: values.start_kernel
  };
}
