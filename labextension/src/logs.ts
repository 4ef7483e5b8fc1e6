/**
 * The log panel of a session, in the main area: a tab per container (`main1`,
 * `sub1`, …), each streaming that container's log with a follow toggle, search
 * and download. A session that ended shows the log the server kept when it
 * ended (with a note saying so). Only the tab on screen streams (a hidden one stops and reloads
 * its tail when shown again), so a few open panels never use up the browser's
 * connections to the server.
 */

import { MainAreaWidget } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { listIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { TabPanel, Widget } from '@lumino/widgets';

import { ClusterClient, ISession } from './api';
import { getTrans } from './i18n';
import { LogText } from './logview';
import { FINAL } from './sessions';
import { LineSplitter } from './sse';

/** Whether `session` ended: its containers are gone, their logs were kept. */
export function hasEnded(session: ISession): boolean {
  return FINAL.has(session.status) || !!session.ended_at;
}

/** Options of the log views. */
export interface ILogOptions {
  /** Lines loaded when a view starts (the end of the log). */
  tail: number;
  /** Lines kept in a view. */
  maxLines: number;
}

/** One container's log: a toolbar (follow, search, download) over the text. */
export class LogView extends Widget {
  constructor(
    readonly client: ClusterClient,
    readonly session: ISession,
    readonly host: string,
    readonly options: ILogOptions
  ) {
    super();
    const trans = getTrans();
    this._trans = trans;
    this.addClass('jp-ClusterLogs-view');
    this.id = `jp-cluster-log-${session.id}-${host}`;
    this.title.label = host;
    this.title.caption = trans.__('Log of %1 (session %2)', host, session.name);
    this.node.dataset.host = host;

    const bar = document.createElement('div');
    bar.className = 'jp-ClusterLogs-toolbar';

    const follow = document.createElement('label');
    follow.className = 'jp-ClusterLogs-follow';
    this._follow = document.createElement('input');
    this._follow.type = 'checkbox';
    this._follow.checked = true;
    this._follow.setAttribute('aria-label', trans.__('Follow the log'));
    this._follow.addEventListener('change', () => this._onFollow());
    follow.append(this._follow, document.createTextNode(trans.__('Follow')));

    this._search = document.createElement('input');
    this._search.type = 'search';
    this._search.placeholder = trans.__('Search');
    this._search.className = 'jp-mod-styled jp-ClusterLogs-search';
    this._search.setAttribute('aria-label', trans.__('Search the log'));
    this._search.addEventListener('input', () => this._onSearch());
    this._search.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this._text.step(event.shiftKey ? -1 : 1);
        this._updateCount();
      } else if (event.key === 'Escape') {
        this._search.value = '';
        this._onSearch();
      }
    });

    this._count = document.createElement('span');
    this._count.className = 'jp-ClusterLogs-count';

    const prev = button('↑', trans.__('Previous match (Shift+Enter)'), () => {
      this._text.step(-1);
      this._updateCount();
    });
    const next = button('↓', trans.__('Next match (Enter)'), () => {
      this._text.step(1);
      this._updateCount();
    });
    const download = button(
      trans.__('Download'),
      trans.__('Download the whole log'),
      () => {
        void this.download();
      }
    );
    download.classList.add('jp-ClusterLogs-download');

    this._status = document.createElement('span');
    this._status.className = 'jp-ClusterLogs-status';

    bar.append(
      follow,
      this._search,
      this._count,
      prev,
      next,
      download,
      this._status
    );

    this._note = document.createElement('div');
    this._note.className = 'jp-ClusterLogs-kept';
    this._note.setAttribute('role', 'note');
    this._note.hidden = true;

    const scroller = document.createElement('div');
    scroller.className = 'jp-ClusterLogs-scroll';
    const text = document.createElement('div');
    scroller.appendChild(text);
    this._text = new LogText(text, options.maxLines);
    this.node.append(bar, this._note, scroller);
    if (hasEnded(session)) {
      this.showKept(session);
    }
  }

  /** Whether the log shown is the one kept when the session ended. */
  get kept(): boolean {
    return !this._note.hidden;
  }

  /**
   * Say that `session` ended and that this is the log kept at its end; a view
   * that showed the log while the session ran loads the kept one (now if on
   * screen, else when shown).
   */
  showKept(session: ISession): void {
    const trans = this._trans;
    const reload = !this.kept;
    const when = session.ended_at
      ? new Date(session.ended_at * 1000).toLocaleString()
      : '';
    this._note.textContent = when
      ? trans.__(
          'Session %1 ended (%2, %3): this is the log of %4 kept at termination.',
          session.name,
          session.status,
          when,
          this.host
        )
      : trans.__(
          'Session %1 ended (%2): this is the log of %3 kept at termination.',
          session.name,
          session.status,
          this.host
        );
    this._note.hidden = false;
    if (reload) {
      this._follow.checked = true;
      if (this.isVisible) {
        this.start();
      }
    }
  }

  /** The lines on screen. */
  get text(): LogText {
    return this._text;
  }

  /** Whether new lines stream in (and the view scrolls to them). */
  get following(): boolean {
    return this._follow.checked;
  }

  set following(value: boolean) {
    if (this._follow.checked !== value) {
      this._follow.checked = value;
      this._onFollow();
    }
  }

  /** (Re)load the end of the log and stream what follows. */
  start(): void {
    this.stop();
    const abort = new AbortController();
    this._abort = abort;
    const lines = new LineSplitter();
    this._text.clear();
    this._setStatus(this._trans.__('connecting…'));
    this.client
      .streamLogs(this.session.id, this.host, {
        tail: this.options.tail,
        signal: abort.signal,
        onText: chunk => {
          if (this._abort !== abort) {
            return;
          }
          this._setStatus(this._trans.__('streaming'));
          this._text.append(lines.push(chunk));
          this._updateCount();
          if (this.following) {
            this._text.scrollToEnd();
          }
        }
      })
      .then(() => {
        if (this._abort !== abort) {
          return;
        }
        this._text.append(lines.flush());
        this._abort = null;
        this._follow.checked = false;
        this._setStatus(
          this.kept
            ? this._trans.__('kept at termination')
            : this._trans.__('the log ended (the container stopped)')
        );
      })
      .catch(error => {
        if (this._abort !== abort) {
          return;
        }
        this._abort = null;
        this._follow.checked = false;
        this._setStatus((error as Error).message, true);
      });
  }

  /** Stop streaming; the lines stay. */
  stop(): void {
    const abort = this._abort;
    this._abort = null;
    abort?.abort();
  }

  /** Save the whole log (from the server; what is on screen if that fails). */
  async download(): Promise<void> {
    let text: string;
    try {
      text = await this.client.logs(this.session.id, this.host);
    } catch {
      text = this._text.toString();
    }
    const blob = new Blob([text], { type: 'text/plain' });
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = `${this.session.name}-${this.host}.log`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  dispose(): void {
    this.stop();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    if (this.following && !this._abort) {
      this.start();
    }
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible && this.following && !this._abort) {
      this.start();
    }
  }

  protected onBeforeHide(msg: Message): void {
    super.onBeforeHide(msg);
    if (this._abort) {
      this.stop();
      this._setStatus(this._trans.__('paused while hidden'));
    }
  }

  protected onBeforeDetach(msg: Message): void {
    this.stop();
    super.onBeforeDetach(msg);
  }

  private _onFollow(): void {
    if (this.following) {
      this.start();
    } else if (this._abort) {
      this.stop();
      this._setStatus(this._trans.__('not following'));
    }
  }

  private _onSearch(): void {
    this._text.search(this._search.value);
    this._updateCount();
  }

  private _updateCount(): void {
    const n = this._text.matches.length;
    this._count.textContent = !this._text.query
      ? ''
      : n
        ? this._trans.__('%1 of %2', this._text.current + 1, n)
        : this._trans.__('no match');
  }

  private _setStatus(text: string, error = false): void {
    this._status.textContent = text;
    this._status.classList.toggle('jp-mod-error', error);
  }

  private _trans: TranslationBundle;
  private _text: LogText;
  private _follow: HTMLInputElement;
  private _search: HTMLInputElement;
  private _count: HTMLElement;
  private _status: HTMLElement;
  private _note: HTMLElement;
  private _abort: AbortController | null = null;
}

/** The logs of one session: a tab per container. */
export class LogPanel extends MainAreaWidget<TabPanel> {
  constructor(
    readonly client: ClusterClient,
    readonly session: ISession,
    readonly options: ILogOptions
  ) {
    const tabs = new TabPanel({ tabPlacement: 'top', tabsMovable: false });
    tabs.addClass('jp-ClusterLogs-tabs');
    super({ content: tabs });
    this.addClass('jp-ClusterLogs');
    this.id = `jp-cluster-logs-${session.id}`;
    const trans = getTrans();
    this.title.label = trans.__('Logs: %1', session.name);
    this.title.caption = trans.__(
      'Container logs of cluster session %1',
      session.name
    );
    this.title.icon = listIcon;
    this.title.closable = true;
    for (const container of session.containers) {
      this._view(container.host);
    }
  }

  /** The view of `host`, made on first use. */
  view(host: string): LogView {
    return this._view(host);
  }

  /** Note in every tab that `session` (this panel's) ended. */
  showKept(session: ISession): void {
    this._ended = session;
    for (const w of this.content.widgets) {
      (w as LogView).showKept(session);
    }
  }

  /** Show the tab of `host`. */
  select(host: string): LogView {
    const view = this._view(host);
    this.content.currentWidget = view;
    return view;
  }

  private _view(host: string): LogView {
    const known = this.content.widgets.find(
      w => (w as LogView).host === host
    ) as LogView | undefined;
    if (known) {
      return known;
    }
    const view = new LogView(this.client, this.session, host, this.options);
    if (this._ended) {
      view.showKept(this._ended);
    }
    this.content.addWidget(view);
    return view;
  }

  private _ended: ISession | null = null;
}

function button(
  label: string,
  title: string,
  onClick: () => void
): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'jp-Button jp-mod-minimal jp-mod-styled jp-ClusterLogs-button';
  b.textContent = label;
  b.title = title;
  b.setAttribute('aria-label', title);
  b.addEventListener('click', onClick);
  return b;
}
