import { IAgent, IContainerUsage, ILaunchOptions, ISession } from '../api';
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

const MIB = 1024 ** 2;

/** One container's use: 47.2% CPU, 120m of 512m, some IO. */
export function usage(
  overrides: Partial<IContainerUsage> = {}
): IContainerUsage {
  return {
    cpu_percent: 47.2,
    mem_used: 120 * MIB,
    mem_limit: 512 * MIB,
    net_rx: 1536 * 1024,
    net_tx: 300 * 1024,
    block_read: 10 * MIB,
    block_write: 2 * MIB,
    pids: 12,
    at: '2024-01-01T00:00:00Z',
    ...overrides
  };
}

/** A client whose stats streams the test feeds, ends or fails. */
export class FakeStatsClient {
  streams: {
    ref: string;
    feed: (text: string) => void;
    end: () => void;
    fail: (error: Error) => void;
    aborted: boolean;
    done: boolean;
  }[] = [];

  streamStats(
    ref: string,
    options: { signal?: AbortSignal; onText: (t: string) => void }
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const stream = {
        ref,
        feed: options.onText,
        end: () => {
          stream.done = true;
          resolve();
        },
        fail: (error: Error) => {
          stream.done = true;
          reject(error);
        },
        aborted: false,
        done: false
      };
      this.streams.push(stream);
      options.signal?.addEventListener('abort', () => {
        stream.aborted = true;
        const error = new Error('aborted');
        error.name = 'AbortError';
        reject(error);
      });
    });
  }

  /** The streams still open (neither aborted, ended nor failed). */
  get open() {
    return this.streams.filter(s => !s.aborted && !s.done);
  }
}
