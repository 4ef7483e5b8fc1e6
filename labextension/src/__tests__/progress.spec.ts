import { Notification } from '@jupyterlab/apputils';

import { ClusterClient } from '../api';
import { describeProgress, followLaunch } from '../progress';
import { SessionsModel } from '../sessions';
import { LiveNotification, SETTLE_MS } from '../toast';
import { session } from './fixtures';

describe('describeProgress', () => {
  it('shows PENDING with its reason', () => {
    const p = describeProgress(
      session({
        status: 'PENDING',
        status_reason: 'no agent has room for 3 × 1 CPU'
      }),
      true
    );
    expect(p).toEqual({
      type: 'in-progress',
      message:
        'Cluster session e104916a is PENDING: no agent has room for 3 × 1 CPU',
      ready: false
    });
  });

  it('counts running containers while PREPARING', () => {
    const s = session({ status: 'PREPARING' });
    s.containers[0].status = 'RUNNING';
    expect(describeProgress(s, true).message).toBe(
      'Cluster session e104916a is PREPARING: 1 of 3 containers running'
    );
  });

  it('waits for the kernel when one was asked for', () => {
    const running = session({ status: 'RUNNING', kernel_state: 'starting' });
    expect(describeProgress(running, true)).toMatchObject({
      type: 'in-progress',
      ready: false
    });
    expect(describeProgress(running, false)).toMatchObject({
      type: 'success',
      ready: true
    });
    expect(
      describeProgress({ ...running, kernel_state: 'running' }, true)
    ).toMatchObject({ type: 'success', ready: true });
    expect(
      describeProgress(
        { ...running, kernel_state: 'failed', kernel_reason: 'timeout' },
        true
      )
    ).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/timeout/)
    });
  });

  it('reports errors and cancellations', () => {
    expect(
      describeProgress(
        session({ status: 'ERROR', status_reason: 'image missing' }),
        true
      )
    ).toMatchObject({
      type: 'error',
      message: 'Cluster session e104916a failed: image missing'
    });
    expect(describeProgress(session({ status: 'CANCELLED' }), true).type).toBe(
      'info'
    );
  });
});

describe('LiveNotification', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('holds back updates until the toast is on screen, keeping the last', () => {
    const update = jest.spyOn(Notification, 'update');
    const toast = new LiveNotification('starting', 'in-progress');
    toast.update({ message: 'one', type: 'in-progress' });
    toast.update({ message: 'two', type: 'success' });
    expect(update).not.toHaveBeenCalled();
    jest.advanceTimersByTime(SETTLE_MS);
    expect(update).toHaveBeenCalledTimes(1);
    expect(update).toHaveBeenCalledWith({
      id: toast.id,
      message: 'two',
      type: 'success'
    });
    toast.update({ message: 'three', type: 'success' });
    expect(update).toHaveBeenCalledTimes(2);
    update.mockRestore();
  });
});

describe('followLaunch', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('opens once, when the kernel runs', () => {
    const model = new SessionsModel({ client: {} as ClusterClient });
    const launched = session({ status: 'PENDING', updated_at: 1 });
    model.upsert(launched);
    const ready = jest.fn();
    followLaunch(model, launched, {
      wantKernel: true,
      onReady: ready,
      onCancel: jest.fn()
    });
    model.upsert({ ...launched, status: 'PREPARING', updated_at: 2 });
    model.upsert({
      ...launched,
      status: 'RUNNING',
      kernel_state: 'starting',
      updated_at: 3
    });
    expect(ready).not.toHaveBeenCalled();
    model.upsert({
      ...launched,
      status: 'RUNNING',
      kernel_state: 'running',
      updated_at: 4
    });
    model.upsert({
      ...launched,
      status: 'RUNNING',
      kernel_state: 'running',
      updated_at: 5
    });
    expect(ready).toHaveBeenCalledTimes(1);
    expect(ready.mock.calls[0][0].kernel_state).toBe('running');
    model.dispose();
  });

  it('never opens a session that failed', () => {
    const model = new SessionsModel({ client: {} as ClusterClient });
    const launched = session({ status: 'PREPARING', updated_at: 1 });
    model.upsert(launched);
    const ready = jest.fn();
    followLaunch(model, launched, {
      wantKernel: true,
      onReady: ready,
      onCancel: jest.fn()
    });
    model.upsert({ ...launched, status: 'ERROR', updated_at: 2 });
    model.upsert({
      ...launched,
      status: 'RUNNING',
      kernel_state: 'running',
      updated_at: 3
    });
    expect(ready).not.toHaveBeenCalled();
    model.dispose();
  });
});
