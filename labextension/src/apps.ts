/**
 * Web apps in main1 (TensorBoard, a dashboard, any HTTP or WebSocket server):
 * opened through the server's app proxy, `{baseUrl}cluster/proxy/{session}/{port}/`
 * (owner only, carried over the session's SSH connection), as a Lab tab (an
 * iframe) or a browser tab. Used by the sidebar's app buttons (./sessionitem)
 * and the command "Open Port in main1…" (./commands).
 */

import { MainAreaWidget, InputDialog } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { IFrame } from '@jupyterlab/ui-components';

import type { ISession } from './api';
import type { IContext } from './context';
import { getTrans } from './i18n';
import { clusterIcon } from './icons';

/** A session's declared apps as [name, port] pairs, in declaration order. */
export function appsOf(session: ISession): [string, number][] {
  return Object.entries(session.apps ?? {});
}

/** Whether `port` is a whole number from 1 to 65535. */
export function validPort(port: unknown): port is number {
  return (
    Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535
  );
}

/** The app proxy's URL of `port` in the session's main1 (with its trailing slash). */
export function appUrl(
  baseUrl: string,
  sessionId: string,
  port: number
): string {
  return URLExt.join(
    baseUrl,
    'cluster/proxy',
    encodeURIComponent(sessionId),
    String(port),
    '/'
  );
}

/** The id of the Lab tab of one app (one tab per session and port). */
export function appTabId(sessionId: string, port: number): string {
  return `jp-ClusterApp-${sessionId}-${port}`;
}

/**
 * Open `port` of the session's main1: a Lab tab (an iframe; focused again if
 * already open) or, with `browser`, a new browser tab.
 */
export function openApp(
  ctx: IContext,
  session: ISession,
  port: number,
  options: { name?: string; browser?: boolean } = {}
): MainAreaWidget<IFrame> | null {
  const trans = getTrans();
  if (!validPort(port)) {
    throw new Error(trans.__('%1 is not a port: use 1 to 65535', String(port)));
  }
  const url = appUrl(ctx.model.client.serverSettings.baseUrl, session.id, port);
  if (options.browser) {
    window.open(url, '_blank', 'noopener');
    return null;
  }
  const id = appTabId(session.id, port);
  const open = Array.from(ctx.app.shell.widgets('main')).find(w => w.id === id);
  if (open) {
    ctx.app.shell.activateById(id);
    return open as MainAreaWidget<IFrame>;
  }
  const frame = new IFrame({
    sandbox: [
      'allow-scripts',
      'allow-same-origin',
      'allow-forms',
      'allow-popups',
      'allow-modals',
      'allow-downloads'
    ],
    referrerPolicy: 'same-origin'
  });
  frame.url = url;
  frame.addClass('jp-ClusterApp-frame');
  const widget = new MainAreaWidget({ content: frame });
  widget.id = id;
  widget.title.label = `${options.name ?? String(port)} · ${session.name}`;
  widget.title.caption = trans.__(
    'Port %1 in main1 of cluster session %2',
    String(port),
    session.name
  );
  widget.title.icon = clusterIcon;
  widget.title.closable = true;
  widget.addClass('jp-ClusterApp');
  ctx.app.shell.add(widget, 'main');
  ctx.app.shell.activateById(widget.id);
  return widget;
}

/** Ask for a port (the session's first app's as the default); null if cancelled. */
export async function askPort(session: ISession): Promise<number | null> {
  const trans = getTrans();
  const first = appsOf(session)[0];
  for (;;) {
    const result = await InputDialog.getNumber({
      title: trans.__('Open which port in main1 of %1?', session.name),
      value: first ? first[1] : 8000
    });
    if (!result.button.accept || result.value === null) {
      return null;
    }
    if (validPort(result.value)) {
      return result.value;
    }
  }
}
