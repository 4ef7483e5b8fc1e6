/**
 * Which cluster session a notebook runs in: a small item in each notebook's
 * toolbar, next to the kernel's name, that reads e.g. "Cluster 4f2a…: 3 × 0.5
 * CPU, 512m · RUNNING" when the notebook's kernel is a cluster session's, and
 * is hidden otherwise. The kernelspec's display name cannot say it (one
 * kernelspec serves every shape launched from the dialog), so this item names
 * the session and its real shape. It follows the sidebar's sessions model (the
 * server's events stream) and the notebook's kernel changes; a click reveals
 * the session in the sidebar. index.ts registers it as a widget extension of
 * the notebook factory. {@link KernelSessionWatch} (which session a notebook
 * runs in) and the words are shared with the status-bar item (./statusbar).
 */

import { ISessionContext } from '@jupyterlab/apputils';
import { IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

import { ISession } from './api';
import { getTrans } from './i18n';
import { SessionsModel } from './sessions';
import { formatCpu, formatSize } from './units';

/** The session whose kernel is `kernelId`, if any (newest first wins). */
export function sessionOfKernel(
  sessions: ISession[],
  kernelId: string | null | undefined
): ISession | undefined {
  if (!kernelId) {
    return undefined;
  }
  return [...sessions].reverse().find(s => s.kernel_id === kernelId);
}

/**
 * A session's real shape, as the kernelspecs write theirs: `3 × 0.5 CPU, 512m`
 * (with GPUs and a multi-node mode when it has them).
 */
export function describeShape(session: ISession): string {
  const size = session.size ?? session.containers.length;
  const r = session.resources;
  let text = r
    ? `${size} × ${formatCpu(r.cpu)} CPU, ${formatSize(r.mem)}`
    : `${size} ×`;
  if (r?.gpu) {
    text += `, ${r.gpu} GPU`;
  }
  if (session.mode && session.mode !== 'single-node') {
    text += ` (${session.mode})`;
  }
  return text;
}

/** The indicator's words: `Cluster <name>: 3 × 0.5 CPU, 512m`. */
export function indicatorLabel(session: ISession): string {
  return getTrans().__('Cluster %1: %2', session.name, describeShape(session));
}

/**
 * Follows which cluster session a notebook's kernel runs in: the sessions
 * model (the events stream) and the notebook's kernel changes. The toolbar
 * item below has one for its notebook; the status-bar item (./statusbar)
 * points it at whichever notebook is current. `onChange` runs after every
 * change of either.
 */
export class KernelSessionWatch implements IDisposable {
  constructor(
    readonly model: SessionsModel,
    readonly onChange: () => void
  ) {
    model.changed.connect(this._changed, this);
  }

  /** The notebook's session context followed, or null for none. */
  get context(): ISessionContext | null {
    return this._context;
  }

  set context(context: ISessionContext | null) {
    if (context === this._context) {
      return;
    }
    this._context?.kernelChanged.disconnect(this._changed, this);
    this._context = context;
    context?.kernelChanged.connect(this._changed, this);
    this._changed();
  }

  /** The session the followed notebook's kernel runs in, if any. */
  get session(): ISession | undefined {
    const kernelId = this._context?.session?.kernel?.id;
    return sessionOfKernel(this.model.sessions, kernelId);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this.model.changed.disconnect(this._changed, this);
    this._context?.kernelChanged.disconnect(this._changed, this);
    this._context = null;
  }

  private _changed(): void {
    if (!this._disposed) {
      this.onChange();
    }
  }

  private _context: ISessionContext | null = null;
  private _disposed = false;
}

/** The words a session's item says on hover (the toolbar's and status bar's). */
export function indicatorTitle(session: ISession): string {
  return getTrans().__(
    'This notebook runs in cluster session %1 (%2). Click to show it in the Cluster Sessions sidebar.',
    session.name,
    session.id
  );
}

/** The toolbar item of one notebook. */
export class ClusterKernelIndicator extends Widget {
  /**
   * `reveal` is called with the session's id on a click (it shows the
   * session in the sidebar).
   */
  constructor(
    readonly model: SessionsModel,
    readonly sessionContext: ISessionContext,
    readonly reveal: (sessionId: string) => void
  ) {
    super({ node: document.createElement('button') });
    this.addClass('jp-ClusterKernelIndicator');
    this.node.setAttribute('type', 'button');
    this._label = document.createElement('span');
    this._label.className = 'jp-ClusterKernelIndicator-label';
    this._status = document.createElement('span');
    this._status.className = 'jp-ClusterKernelIndicator-status';
    this.node.append(this._label, this._status);
    this.node.addEventListener('click', this);
    this._watch = new KernelSessionWatch(model, () => this._refresh());
    this._watch.context = sessionContext;
  }

  /** The session shown, if the notebook's kernel is one's. */
  get session(): ISession | undefined {
    return this._session;
  }

  handleEvent(event: Event): void {
    if (event.type === 'click' && this._session) {
      this.reveal(this._session.id);
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.node.removeEventListener('click', this);
    this._watch.dispose();
    super.dispose();
  }

  private _refresh(): void {
    const session = this._watch.session;
    this._session = session;
    if (!session) {
      this.hide();
      this.node.removeAttribute('data-session-id');
      return;
    }
    this._label.textContent = indicatorLabel(session);
    this._status.textContent = session.status;
    this._status.className = `jp-ClusterKernelIndicator-status jp-ClusterStatus jp-ClusterStatus-${session.status} jp-mod-small`;
    this.node.dataset.sessionId = session.id;
    this.node.dataset.status = session.status;
    this.node.title = indicatorTitle(session);
    this.show();
  }

  private _label: HTMLElement;
  private _status: HTMLElement;
  private _session: ISession | undefined;
  private _watch: KernelSessionWatch;
}

/** A notebook panel, as far as the extension uses it: its toolbar. */
interface IToolbarHost extends Widget {
  toolbar: {
    insertAfter(at: string, name: string, widget: Widget): boolean;
    addItem(name: string, widget: Widget): boolean;
  };
}

/**
 * Adds a {@link ClusterKernelIndicator} before the kernel's name in every
 * notebook's toolbar (a DocumentRegistry widget extension of "Notebook").
 */
export class ClusterIndicatorExtension {
  constructor(
    readonly model: SessionsModel,
    readonly reveal: (sessionId: string) => void
  ) {}

  createNew(
    panel: IToolbarHost,
    context: { sessionContext: ISessionContext }
  ): IDisposable {
    const item = new ClusterKernelIndicator(
      this.model,
      context.sessionContext,
      this.reveal
    );
    // Before the kernel's name: a narrow toolbar moves its last items into the
    // "…" menu first, and the kernelspec's name is the less telling of the two.
    if (!panel.toolbar.insertAfter('spacer', NAME, item)) {
      panel.toolbar.addItem(NAME, item);
    }
    return item;
  }
}

const NAME = 'clusterSession';

/**
 * Shows `sidebar` and marks the session's row for a moment (scrolled into
 * view), so people see which session a notebook runs in.
 */
export function revealSession(
  activate: () => void,
  sidebar: Widget,
  sessionId: string,
  highlightMs = 4000
): void {
  activate();
  requestAnimationFrame(() => {
    const row = [
      ...sidebar.node.querySelectorAll<HTMLElement>('.jp-ClusterSession')
    ].find(node => node.dataset.sessionId === sessionId);
    if (!row) {
      return;
    }
    row.scrollIntoView({ block: 'nearest' });
    row.classList.add('jp-mod-highlighted');
    setTimeout(() => row.classList.remove('jp-mod-highlighted'), highlightMs);
  });
}
