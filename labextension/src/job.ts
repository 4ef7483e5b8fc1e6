/**
 * A batch session's job in one line, for the sidebar and Recent sessions:
 * `running 12s`, `succeeded (exit 0) in 41m`, `failed (exit 3) in 5s, 2 tries`.
 */

import { getTrans } from './i18n';
import { IJob } from './models';
import { formatAge, formatLeft } from './units';

/** The job's line, or '' for an interactive session (no job). */
export function jobSummary(
  job: IJob | null | undefined,
  now: number = Date.now()
): string {
  if (!job) {
    return '';
  }
  const trans = getTrans();
  const current = job.tries.length ? job.tries[job.tries.length - 1] : null;
  const tries =
    job.tries.length > 1 ? trans.__(', %1 tries', job.tries.length) : '';
  if (job.state === 'running' && current) {
    return (
      trans.__('job running %1', formatAge(current.started_at, now)) + tries
    );
  }
  if (job.state === 'waiting') {
    return trans.__('job waiting') + tries;
  }
  const took =
    job.duration !== null
      ? trans.__(' in %1', formatLeft(job.duration, 0))
      : '';
  const code =
    job.exit_code !== null ? trans.__(' (exit %1)', job.exit_code) : '';
  const state =
    job.state === 'succeeded'
      ? trans.__('job succeeded')
      : job.state === 'failed'
        ? trans.__('job failed')
        : trans.__('job stopped');
  return state + code + took + tries;
}
