import { IAgent, ILaunchOptions, ISession } from '../api';

const GIB = 1024 ** 3;

/** What `GET launch-options` answers on a default server. */
export function launchOptions(): ILaunchOptions {
  return {
    fields: [
      {
        name: 'image',
        type: 'string',
        choices: ['jupyter-cluster/kernel:latest', 'other:1'],
        default: 'jupyter-cluster/kernel:latest'
      },
      { name: 'size', type: 'integer', minimum: 1, maximum: 16, default: 1 },
      {
        name: 'mode',
        type: 'string',
        choices: ['single-node', 'multi-node'],
        default: 'single-node'
      },
      {
        name: 'cpu',
        type: 'number',
        minimum: 0.001,
        maximum: 8,
        step: 0.001,
        default: 1
      },
      {
        name: 'mem',
        type: 'size',
        minimum: '6m',
        maximum: '16g',
        minimum_bytes: 6 * 1024 ** 2,
        maximum_bytes: 16 * GIB,
        default: '1g'
      },
      {
        name: 'shm',
        type: 'size',
        minimum: '1',
        maximum: '4g',
        minimum_bytes: 1,
        maximum_bytes: 4 * GIB,
        default: '64m'
      },
      { name: 'gpu', type: 'integer', minimum: 0, maximum: 8, default: 0 },
      {
        name: 'mounts',
        type: 'array',
        items: 'string',
        choices: ['data', 'models'],
        unique: true,
        default: []
      },
      {
        name: 'resource_group',
        type: 'string',
        choices: ['default', 'gpu'],
        default: 'default'
      },
      {
        name: 'name',
        type: 'string',
        nullable: true,
        pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$',
        max_length: 64,
        default: null
      },
      {
        name: 'bootstrap',
        type: 'string',
        nullable: true,
        max_length: 65536,
        default: null
      },
      { name: 'start_kernel', type: 'boolean', default: false }
    ],
    defaults: {
      image: 'jupyter-cluster/kernel:latest',
      size: 1,
      mode: 'single-node',
      cpu: 1.0,
      mem: '1g',
      shm: '64m',
      gpu: 0,
      mounts: [],
      resource_group: 'default',
      name: null,
      bootstrap: null,
      start_kernel: false
    },
    limits: {
      max_size: 16,
      max_cpu: 8,
      max_mem: 16 * GIB,
      max_shm: 4 * GIB,
      max_gpu: 8,
      max_sessions_per_user: 8
    }
  };
}

export function agent(
  id: string,
  cpu: number,
  memGiB: number,
  group = 'default',
  gpu = 0
): IAgent {
  return {
    id,
    resource_group: group,
    reachable: true,
    capacity: { cpu, mem: memGiB * GIB, gpu },
    allocated: { cpu: 0, mem: 0, gpu: 0 },
    free: { cpu, mem: memGiB * GIB, gpu }
  };
}

export function session(overrides: Partial<ISession> = {}): ISession {
  const id = overrides.id ?? 'e104916a-c74e-4b44-a319-02a6c77cfec9';
  return {
    id,
    name: id.slice(0, 8),
    status: 'PREPARING',
    status_reason: '',
    mode: 'single-node',
    size: 3,
    image: 'jupyter-cluster/kernel:latest',
    resources: { cpu: 0.5, mem: 512 * 1024 ** 2, shm: 64 * 1024 ** 2, gpu: 0 },
    mounts: [],
    resource_group: 'default',
    bootstrap: null,
    containers: ['main1', 'sub1', 'sub2'].map((host, i) => ({
      host,
      role: i === 0 ? 'main' : 'sub',
      idx: 1,
      local_rank: i,
      kernel_id: `${id}-${i}`,
      agent: 'local',
      status: 'PENDING',
      container_id: null,
      gpu_ids: [],
      status_reason: ''
    })),
    created_at: 1000,
    updated_at: 1000,
    ended_at: null,
    owner: 'me',
    kernel_id: id,
    kernel_state: 'waiting',
    kernel_reason: '',
    ...overrides
  };
}
