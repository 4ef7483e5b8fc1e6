/**
 * The status bar names the cluster session the current notebook (or console)
 * runs in, with its real shape and status: "Cluster 4f2a…: 3 × 0.5 CPU, 512m ·
 * RUNNING". Lab's own kernel item next to it shows the kernelspec's display
 * name, which for the cluster kernelspec is the launch form's defaults (one
 * kernelspec serves every shape launched from the dialog); this item says what
 * the kernel really runs on. It is hidden when the current widget has no
 * cluster kernel; a click reveals the session in the sidebar. Which session is
 * shown comes from ./indicator's {@link KernelSessionWatch}, as the notebook
 * toolbar's item does. index.ts registers it when Lab has a status bar.
 */

import { ISessionContext } from '@jupyterlab/apputils';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { ISession } from './api';
import {
  indicatorLabel,
  indicatorTitle,
  KernelSessionWatch
} from './indicator';
import { SessionsModel } from './sessions';

/** The id of the item in Lab's status bar. */
export const STATUS_ITEM_ID = 'jupyter-cluster:session-status';

/** The words of the item: `Cluster <name>: 3 × 0.5 CPU, 512m · RUNNING`. */
export function statusText(session: ISession): string {
  return `${indicatorLabel(session)} · ${session.status}`;
}

/** The session context of a shell widget, if it has one (notebooks, consoles). */
export function contextOf(widget: Widget | null): ISessionContext | null {
  const context = (widget as { sessionContext?: ISessionContext } | null)
    ?.sessionContext;
  return context && typeof context.kernelChanged?.connect === 'function'
    ? context
    : null;
}

/** The status-bar item; `current` follows the shell's current widget. */
export class ClusterStatusItem extends Widget {
  /** `reveal` is called with the session's id on a click. */
  constructor(
    readonly model: SessionsModel,
    readonly reveal: (sessionId: string) => void
  ) {
    super();
    this.addClass('jp-ClusterStatusItem');
    this.addClass('jp-StatusBar-TextItem');
    this.node.setAttribute('role', 'button');
    this.node.tabIndex = 0;
    this.node.addEventListener('click', this);
    this.node.addEventListener('keydown', this);
    this._watch = new KernelSessionWatch(model, () => this._refresh());
    this._refresh();
  }

  /** The session shown, if the current widget's kernel is a session's. */
  get session(): ISession | undefined {
    return this._session;
  }

  /** Emitted when the item starts or stops having something to show. */
  get activeChanged(): ISignal<this, void> {
    return this._activeChanged;
  }

  /** Follow this shell widget's kernel (null: nothing to show). */
  setCurrent(widget: Widget | null): void {
    this._watch.context = contextOf(widget);
  }

  handleEvent(event: Event): void {
    const key = (event as KeyboardEvent).key;
    if (
      this._session &&
      (event.type === 'click' || key === 'Enter' || key === ' ')
    ) {
      this.reveal(this._session.id);
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.node.removeEventListener('click', this);
    this.node.removeEventListener('keydown', this);
    this._watch.dispose();
    super.dispose();
  }

  private _refresh(): void {
    const was = this._session !== undefined;
    const session = this._watch.session;
    this._session = session;
    if (session) {
      this.node.textContent = statusText(session);
      this.node.title = indicatorTitle(session);
      this.node.dataset.sessionId = session.id;
      this.node.dataset.status = session.status;
    } else {
      this.node.textContent = '';
      this.node.removeAttribute('title');
      delete this.node.dataset.sessionId;
      delete this.node.dataset.status;
    }
    if (was !== (session !== undefined)) {
      this._activeChanged.emit();
    }
  }

  private _watch: KernelSessionWatch;
  private _session: ISession | undefined;
  private _activeChanged = new Signal<this, void>(this);
}

/** What the status bar needs of the shell: its current widget and its changes. */
export interface ICurrentShell {
  readonly currentWidget: Widget | null;
  readonly currentChanged?: ISignal<unknown, unknown>;
}

/**
 * Put a {@link ClusterStatusItem} in `statusBar` (left, after Lab's kernel
 * status) following `shell`'s current widget. Called by index.ts.
 */
export function addStatusItem(
  statusBar: IStatusBar,
  shell: ICurrentShell,
  model: SessionsModel,
  reveal: (sessionId: string) => void
): ClusterStatusItem {
  const item = new ClusterStatusItem(model, reveal);
  const follow = () => item.setCurrent(shell.currentWidget);
  shell.currentChanged?.connect(follow);
  follow();
  statusBar.registerStatusItem(STATUS_ITEM_ID, {
    item,
    align: 'left',
    rank: 2,
    isActive: () => item.session !== undefined,
    activeStateChanged: item.activeChanged
  });
  return item;
}
