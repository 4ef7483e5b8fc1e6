/**
 * The models of the jupyter-cluster REST API (`jupyter_cluster/server/openapi.json`):
 * sessions, containers, agents, groups, images, the launch form and the events.
 */

export type SessionStatus =
  | 'PENDING'
  | 'PREPARING'
  | 'RUNNING'
  | 'RUNNING_DEGRADED'
  | 'TERMINATING'
  | 'TERMINATED'
  | 'ERROR'
  | 'CANCELLED';

export type ContainerStatus =
  | 'PENDING'
  | 'PULLING'
  | 'CREATING'
  | 'STARTING'
  | 'RUNNING'
  | 'EXITED'
  | 'TERMINATED'
  | 'ERROR';

export type ClusterMode = 'single-node' | 'multi-node';

export type KernelState =
  'waiting' | 'starting' | 'running' | 'failed' | 'gone' | null;

/** Resources of one container (memory and shm in bytes). */
export interface IResources {
  cpu: number;
  mem: number;
  shm?: number;
  gpu: number;
}

/** One container of a session: `main1`, `sub1`, … */
export interface IContainer {
  host: string;
  role: 'main' | 'sub';
  idx?: number;
  local_rank?: number;
  kernel_id?: string;
  agent?: string | null;
  status: ContainerStatus;
  container_id?: string | null;
  gpu_ids?: string[];
  status_reason?: string;
}

/** A cluster session as the server describes it. */
/** A batch session's job: its state, exit code and tries (see the REST Session). */
export interface IJob {
  state: 'waiting' | 'running' | 'succeeded' | 'failed' | 'stopped';
  exit_code: number | null;
  tries: {
    number: number;
    started_at: number;
    ended_at: number | null;
    exit_code: number | null;
  }[];
  duration: number | null;
  reason?: string;
}

export interface ISession {
  id: string;
  name: string;
  status: SessionStatus;
  status_reason?: string;
  mode?: ClusterMode;
  size?: number;
  image?: string;
  resources?: IResources;
  mounts?: string[];
  resource_group?: string;
  bootstrap?: string | null;
  /** A batch session's command (null: interactive) and its job's state. */
  command?: string | null;
  max_lifetime?: number | null;
  retries?: number;
  job?: IJob | null;
  /** Names of the variables set at launch (values are never shown). */
  env?: string[];
  /** Web apps in main1 declared at launch, name to port (./apps opens them). */
  apps?: Record<string, number>;
  containers: IContainer[];
  created_at?: number;
  updated_at?: number;
  ended_at?: number | null;
  owner?: string;
  kernel_id?: string | null;
  kernel_state?: KernelState;
  kernel_reason?: string;
  /** With an idle timeout: when (epoch seconds) it ends unless used; null in use. */
  idle_deadline?: number | null;
}

/** Amounts of CPU, memory (bytes) and GPUs. */
export interface IUsage {
  cpu: number;
  mem: number;
  gpu: number;
}

/** A Docker host that runs containers. */
export interface IAgent {
  id: string;
  resource_group: string;
  reachable: boolean;
  /** Why it is unavailable; empty when it answers. */
  message?: string;
  capacity?: IUsage;
  allocated?: IUsage;
  free?: IUsage;
  gpu_ids?: string[];
  /** The id of the Docker Swarm it is a node of; empty for none. */
  swarm?: string;
  /** A problem that does not stop it (e.g. not in the others' Swarm); empty for none. */
  warning?: string;
}

/** A group of agents, with their resources summed. */
export interface IResourceGroup {
  name: string;
  agents: string[];
  capacity: IUsage;
  used: IUsage;
  free: IUsage;
}

/** An image users may launch, and on which agents it is present. */
export interface IImage {
  name: string;
  default: boolean;
  agents?: { [agent: string]: boolean | null };
}

/** One field of the launch form (`GET launch-options`). */
export interface ILaunchField {
  name: string;
  type:
    'string' | 'integer' | 'number' | 'size' | 'array' | 'boolean' | 'object';
  label?: string;
  help?: string;
  default: any;
  minimum?: any;
  maximum?: any;
  minimum_bytes?: number;
  maximum_bytes?: number;
  step?: number;
  choices?: string[];
  items?: string;
  unique?: boolean;
  nullable?: boolean;
  pattern?: string;
  max_length?: number;
}

/**
 * A launch profile as `GET launch-options` lists it: named launch fields, and
 * whether the user's limits let them launch it as it is (the reason if not).
 */
export interface ILaunchProfile {
  name: string;
  description: string;
  groups?: string[];
  /** Fields of `POST sessions`, e.g. `{size: 2, cpu: 0.5}`. */
  fields: { [name: string]: any };
  disabled?: boolean;
  reason?: string;
  /** The site's (configured) or the user's own. */
  scope?: 'site' | 'user';
}

/** The launch form: fields with limits, defaults and choices. */
export interface ILaunchOptions {
  fields: ILaunchField[];
  defaults: { [name: string]: any };
  limits: { [name: string]: number };
  /** The launch profiles the user sees (absent from older servers). */
  profiles?: ILaunchProfile[];
}

/** The body of `POST sessions`. */
export interface ILaunchRequest {
  image?: string;
  size?: number;
  mode?: ClusterMode;
  cpu?: number | string;
  mem?: number | string;
  shm?: number | string;
  gpu?: number;
  mounts?: string[];
  resource_group?: string;
  name?: string | null;
  bootstrap?: string | null;
  command?: string | null;
  max_lifetime?: string | number | null;
  /** With command: how often a failing job is tried again (from a profile). */
  retries?: number;
  env?: Record<string, string> | null;
  /** Web apps in main1, name to port (sent only when some are declared). */
  apps?: Record<string, number> | null;
  start_kernel?: boolean;
  /** With start_kernel: the kernel's folder, relative to the server's root. */
  notebook_dir?: string | null;
}

/**
 * What a launch would meet now (`POST sessions?dry_run=1`): whether it would
 * start at once and on which agent each host would run, or why it would wait.
 */
export interface ILaunchCheck {
  starts_now: boolean;
  /** Host name (main1, sub1, …) to agent, when it would start now. */
  placement: Record<string, string>;
  /** Why it would wait (PENDING), in the queue's words. */
  reason: string;
}

/** A terminal of the server's terminal service, opened in one container. */
export interface ITerminalModel {
  name: string;
  last_activity?: string;
  session_id?: string;
  host?: string;
}

/** One container's resource use (`GET sessions/{id}/stats`): bytes and counts. */
export interface IContainerUsage {
  /** CPU % of one CPU: 200 is two CPUs busy. */
  cpu_percent: number;
  mem_used: number;
  mem_limit: number;
  net_rx: number;
  net_tx: number;
  block_read: number;
  block_write: number;
  pids: number;
  /** When Docker read it (ISO 8601). */
  at: string;
  /** Only for a container given GPUs: each GPU it sees (from nvidia-smi). */
  gpus?: IGpuUsage[];
  /** Only for a container given GPUs: why some or all GPU figures are missing. */
  gpu_note?: string;
}

/** One GPU seen in a container: utilization % (null: not reported), bytes. */
export interface IGpuUsage {
  /** nvidia-smi's index of the GPU inside the container. */
  index: string;
  util_percent: number | null;
  mem_used: number;
  mem_total: number;
}

/** One sample of a session's use: per host, null when it does not run. */
export interface IStatsSample {
  session_id: string;
  /** When the server took it (epoch seconds). */
  time: number;
  hosts: { [host: string]: IContainerUsage | null };
}

/** An event of `GET events`: a snapshot, or a session's or container's change. */
export type ClusterEvent =
  | { type: 'snapshot'; sessions: ISession[] }
  | {
      type: 'session';
      id?: number;
      session_id: string;
      status: SessionStatus;
      previous_status: SessionStatus | null;
      session: ISession;
    }
  | {
      type: 'container';
      id?: number;
      session_id: string;
      host: string;
      status: ContainerStatus;
      previous_status: ContainerStatus | null;
      status_reason?: string;
      container_id?: string | null;
      agent?: string | null;
    };
