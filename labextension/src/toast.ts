/**
 * A notification that changes over time (a launch's progress, a termination).
 * JupyterLab drops an update that reaches a toast before it is on screen, so
 * updates within the first moments are held back and only the latest is shown.
 */

import { Notification } from '@jupyterlab/apputils';

/** How long a new toast takes to be on screen (ms). */
export const SETTLE_MS = 400;

export class LiveNotification {
  constructor(
    message: string,
    type: Notification.TypeOptions,
    options: Notification.IOptions<any> = {}
  ) {
    this.id = Notification.emit(message, type, options);
    this._settled = Date.now() + SETTLE_MS;
  }

  readonly id: string;

  /** Show `options` now, or as soon as the toast is on screen. */
  update(options: Omit<Notification.IUpdate<any>, 'id'>): void {
    this._pending = options;
    const wait = this._settled - Date.now();
    if (wait <= 0) {
      this._flush();
    } else if (this._timer === null) {
      this._timer = setTimeout(() => this._flush(), wait);
    }
  }

  private _flush(): void {
    this._timer = null;
    if (this._pending) {
      Notification.update({ id: this.id, ...this._pending });
      this._pending = null;
    }
  }

  private _settled: number;
  private _pending: Omit<Notification.IUpdate<any>, 'id'> | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
}
