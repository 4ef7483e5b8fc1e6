/**
 * The session's total resources (N × per container) and whether an agent has
 * room for it now, by the fit rule of `jupyter_cluster/core/scheduler.py`: a
 * container fits an agent when its CPU, memory and GPUs all fit in what is free
 * (shared memory is not counted). That estimate is shown at once; the server's
 * dry run of the launch (`fromCheck`, which also knows the queue, the user's
 * limits and the Swarms) replaces it when it answers. Pure: the launch dialog
 * shows its answers.
 */

import { ClusterMode, IAgent, ILaunchCheck } from './api';
import { ILaunchValues, wholeNumber } from './form';
import { getTrans } from './i18n';
import { formatCpu, formatSize, parseCpu, parseSize } from './units';

/** Per-container resources and the session's totals (N × per container). */
export interface ITotals {
  size: number;
  cpu: number;
  mem: number;
  shm: number;
  gpu: number;
  totalCpu: number;
  totalMem: number;
  totalShm: number;
  totalGpu: number;
}

/** The totals of the values, or null while a number in them is not valid. */
export function totals(values: ILaunchValues): ITotals | null {
  const size = wholeNumber(values.size);
  const cpu = parseCpu(values.cpu);
  const mem = parseSize(values.mem);
  const shm = parseSize(values.shm);
  const gpu = wholeNumber(values.gpu);
  if (
    size === null ||
    size < 1 ||
    cpu === null ||
    mem === null ||
    shm === null ||
    gpu === null
  ) {
    return null;
  }
  return {
    size,
    cpu,
    mem,
    shm,
    gpu,
    totalCpu: Math.round(cpu * size * 1000) / 1000,
    totalMem: mem * size,
    totalShm: shm * size,
    totalGpu: gpu * size
  };
}

/** `3 × (0.5 CPU, 1g memory, 64m shm) = 1.5 CPU, 3g memory, 192m shm` */
export function describeTotals(t: ITotals): string {
  const trans = getTrans();
  const one = trans.__(
    '%1 CPU, %2 memory, %3 shm',
    formatCpu(t.cpu),
    formatSize(t.mem),
    formatSize(t.shm)
  );
  const all = trans.__(
    '%1 CPU, %2 memory, %3 shm',
    formatCpu(t.totalCpu),
    formatSize(t.totalMem),
    formatSize(t.totalShm)
  );
  const gpu = (n: number) => (t.gpu ? trans.__(', %1 GPU', n) : '');
  return `${t.size} × (${one}${gpu(t.gpu)}) = ${all}${gpu(t.totalGpu)}`;
}

/** How many containers of `t`'s size fit in an agent's free resources now. */
export function containersThatFit(agent: IAgent, t: ITotals): number {
  const free = agent.free;
  if (!agent.reachable || !free) {
    return 0;
  }
  const counts: number[] = [];
  if (t.cpu > 0) {
    counts.push(Math.floor((free.cpu + 1e-9) / t.cpu));
  }
  if (t.mem > 0) {
    counts.push(Math.floor(free.mem / t.mem));
  }
  if (t.gpu > 0) {
    counts.push(Math.floor(free.gpu / t.gpu));
  }
  return counts.length
    ? Math.max(0, Math.min(...counts))
    : Number.MAX_SAFE_INTEGER;
}

/** Whether the session can start now, and where. */
export interface IRoom {
  /** Whether it would start now (not PENDING). */
  now: boolean;
  /** An agent with room for every container, if there is one. */
  agent: string | null;
  /** The agents it would be spread over (multi-node without one such agent). */
  spread: string[];
  /** One sentence for people. */
  message: string;
  /** The server would refuse the launch (the user's limits, a name in use). */
  refused?: boolean;
}

/** Whether one agent of the group has room for the session now (see scheduler.py). */
export function room(
  t: ITotals,
  mode: ClusterMode,
  group: string,
  agents: IAgent[]
): IRoom {
  const trans = getTrans();
  const members = agents.filter(a => a.resource_group === group);
  const reachable = members.filter(a => a.reachable);
  if (!members.length) {
    return {
      now: false,
      agent: null,
      spread: [],
      message: trans.__('Resource group %1 has no agents.', group)
    };
  }
  const fits = reachable
    .map(a => ({ id: a.id, n: containersThatFit(a, t) }))
    .sort((a, b) => b.n - a.n);
  const best = fits.find(f => f.n >= t.size);
  const all = allOf(t.size);
  if (best) {
    return {
      now: true,
      agent: best.id,
      spread: [],
      message: trans.__('Agent %1 has room for %2 now.', best.id, all)
    };
  }
  const most = fits.length ? fits[0].n : 0;
  if (mode === 'multi-node') {
    const spread: string[] = [];
    let placed = 0;
    for (const f of fits) {
      if (placed >= t.size || f.n <= 0) {
        break;
      }
      spread.push(f.id);
      placed += f.n;
    }
    if (placed >= t.size) {
      return {
        now: true,
        agent: null,
        spread,
        message: trans.__(
          'No single agent has room for %1; they would be spread over %2.',
          all,
          spread.join(', ')
        )
      };
    }
    return {
      now: false,
      agent: null,
      spread: [],
      message: trans.__(
        'The agents of %1 have room for %2 of %3 containers now: the session would wait (PENDING) until there is room.',
        group,
        placed,
        t.size
      )
    };
  }
  return {
    now: false,
    agent: null,
    spread: [],
    message: trans.__(
      'No agent of %1 has room for %2 now (at most %3 fit on one): the session would wait (PENDING) until one has.',
      group,
      all,
      most
    )
  };
}

/** How many containers, for people: "the container" or "all 3 containers". */
function allOf(size: number): string {
  const trans = getTrans();
  return size === 1
    ? trans.__('the container')
    : trans.__('all %1 containers', size);
}

/**
 * The server's dry run of the launch (`POST sessions?dry_run=1`) as the dialog
 * shows it: where it would start, why it would wait, or (`refusal`: the
 * server's message) why it would be refused.
 */
export function fromCheck(check: ILaunchCheck | { refusal: string }): IRoom {
  const trans = getTrans();
  if ('refusal' in check) {
    return {
      now: false,
      agent: null,
      spread: [],
      refused: true,
      message: trans.__('The launch would be refused: %1', check.refusal)
    };
  }
  if (!check.starts_now) {
    return {
      now: false,
      agent: null,
      spread: [],
      message: trans.__('The session would wait (PENDING): %1', check.reason)
    };
  }
  const agents = [...new Set(Object.values(check.placement))];
  const all = allOf(Object.keys(check.placement).length);
  if (agents.length === 1) {
    return {
      now: true,
      agent: agents[0],
      spread: [],
      message: trans.__('Agent %1 has room for %2 now.', agents[0], all)
    };
  }
  return {
    now: true,
    agent: null,
    spread: agents,
    message: trans.__(
      'No single agent has room for %1; they would be spread over %2.',
      all,
      agents.join(', ')
    )
  };
}
