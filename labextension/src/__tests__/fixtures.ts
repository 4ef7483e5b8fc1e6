import { IAgent, ILaunchOptions, ISession } from '../api';
import served from './launch-options.json';

const GIB = 1024 ** 3;

/**
 * What `GET launch-options` answers for the policy the tests assume (two
 * images, sizes up to 16, 8 CPUs, 16g memory, 4g shm, 8 GPUs, groups default
 * and gpu, folders data and models): a fresh copy each call, to change freely.
 */
export function launchOptions(): ILaunchOptions {
  return JSON.parse(JSON.stringify(served));
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
