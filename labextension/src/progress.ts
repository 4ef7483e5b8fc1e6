/**
 * What people see while a launched session starts: one notification that
 * follows it through PENDING (with the reason), PREPARING (how many containers
 * run) and RUNNING (the kernel starting), then says it is ready, or why it
 * failed. The text is made by {@link describeProgress}, a pure function.
 */

import { ISession } from './api';
import { getTrans } from './i18n';
import { FINAL, SessionsModel, USABLE } from './sessions';
import { LiveNotification } from './toast';

/** Where a launch is, for people. */
export interface IProgress {
  /** `in-progress` while it starts, then `success`, `error`, or `info` when it
   * was cancelled or terminated before it was ready. */
  type: 'in-progress' | 'success' | 'error' | 'info';
  message: string;
  /** Whether it is ready to use (and the notebook may open). */
  ready: boolean;
}

/** The progress of `session`; `wantKernel` when a kernel was asked for. */
export function describeProgress(
  session: ISession,
  wantKernel: boolean
): IProgress {
  const trans = getTrans();
  const name = session.name;
  const containers = session.containers ?? [];
  const running = containers.filter(c => c.status === 'RUNNING').length;
  const reason = session.status_reason ?? '';
  const progress = (message: string): IProgress => ({
    type: 'in-progress',
    message,
    ready: false
  });
  switch (session.status) {
    case 'PENDING':
      return progress(
        trans.__(
          'Cluster session %1 is PENDING: %2',
          name,
          reason || trans.__('waiting for room on an agent')
        )
      );
    case 'PREPARING':
      return progress(
        trans.__(
          'Cluster session %1 is PREPARING: %2 of %3 containers running',
          name,
          running,
          containers.length || session.size || '?'
        )
      );
    case 'RUNNING':
    case 'RUNNING_DEGRADED': {
      const status =
        session.status === 'RUNNING_DEGRADED'
          ? trans.__('RUNNING (degraded: a container died)')
          : 'RUNNING';
      if (!wantKernel) {
        return {
          type: 'success',
          message: trans.__('Cluster session %1 is %2', name, status),
          ready: true
        };
      }
      switch (session.kernel_state) {
        case 'running':
          return {
            type: 'success',
            message: trans.__(
              'Cluster session %1 is %2; its kernel runs in main1',
              name,
              status
            ),
            ready: true
          };
        case 'failed':
        case 'gone':
          return {
            type: 'error',
            message: trans.__(
              'Cluster session %1 is RUNNING but its kernel did not start: %2',
              name,
              session.kernel_reason || trans.__('no reason given')
            ),
            ready: false
          };
        default:
          return progress(
            trans.__(
              'Cluster session %1 is %2; starting its kernel in main1…',
              name,
              status
            )
          );
      }
    }
    case 'ERROR':
      return {
        type: 'error',
        message: trans.__(
          'Cluster session %1 failed: %2',
          name,
          reason || trans.__('no reason given')
        ),
        ready: false
      };
    default: {
      const message = reason
        ? trans.__('Cluster session %1 is %2: %3', name, session.status, reason)
        : trans.__('Cluster session %1 is %2', name, session.status);
      return FINAL.has(session.status)
        ? { type: 'info', message, ready: false }
        : progress(message);
    }
  }
}

/**
 * Follow a launched session in a notification until it is ready (then call
 * `onReady` once) or fails. `onCancel` is offered while it has not started.
 */
export function followLaunch(
  model: SessionsModel,
  launched: ISession,
  options: {
    wantKernel: boolean;
    onReady: (session: ISession) => void;
    onCancel: (session: ISession) => void;
  }
): void {
  const trans = getTrans();
  let last = describeProgress(launched, options.wantKernel);
  const cancel = {
    label: trans.__('Cancel'),
    caption: trans.__('Terminate (cancel) this session'),
    callback: () => options.onCancel(model.get(launched.id) ?? launched)
  };
  const toast = new LiveNotification(last.message, 'in-progress', {
    autoClose: false,
    actions: [cancel]
  });
  let done = false;
  const update = () => {
    if (done) {
      return;
    }
    const session = model.get(launched.id);
    if (!session) {
      return;
    }
    const progress = describeProgress(session, options.wantKernel);
    if (progress.message !== last.message || progress.type !== last.type) {
      last = progress;
      const final = progress.type !== 'in-progress';
      toast.update({
        message: progress.message,
        type: progress.type,
        autoClose: final && progress.type !== 'error' ? 5000 : false,
        actions: final ? [] : [cancel]
      });
    }
    if (progress.type !== 'in-progress') {
      done = true;
      model.changed.disconnect(update);
      if (progress.ready && USABLE.has(session.status)) {
        options.onReady(session);
      }
    }
  };
  model.changed.connect(update);
  update();
}
