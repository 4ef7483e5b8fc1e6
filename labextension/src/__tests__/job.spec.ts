import { jobSummary } from '../job';
import { IJob } from '../models';

const NOW = 1_800_000_000_000; // ms

function job(patch: Partial<IJob>): IJob {
  return {
    state: 'waiting',
    exit_code: null,
    tries: [],
    duration: null,
    ...patch
  };
}

describe('jobSummary', () => {
  it('says nothing for an interactive session', () => {
    expect(jobSummary(null, NOW)).toBe('');
    expect(jobSummary(undefined, NOW)).toBe('');
  });

  it('says how long a running try runs and how a finished job ended', () => {
    const started = NOW / 1000 - 12;
    const running = job({
      state: 'running',
      tries: [
        { number: 1, started_at: started, ended_at: null, exit_code: null }
      ]
    });
    expect(jobSummary(running, NOW)).toBe('job running 12s');
    const failed = job({
      state: 'failed',
      exit_code: 3,
      duration: 5,
      tries: [
        { number: 1, started_at: 0, ended_at: 2, exit_code: 3 },
        { number: 2, started_at: 3, ended_at: 5, exit_code: 3 }
      ]
    });
    expect(jobSummary(failed, NOW)).toBe('job failed (exit 3) in 5s, 2 tries');
    expect(
      jobSummary(job({ state: 'succeeded', exit_code: 0, duration: 2460 }), NOW)
    ).toBe('job succeeded (exit 0) in 41m');
    expect(jobSummary(job({ state: 'stopped' }), NOW)).toBe('job stopped');
  });
});
