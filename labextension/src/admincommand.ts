/**
 * The command "Cluster Admin" (`cluster:admin`) that opens the admin panel
 * (./adminpanel, loaded when first opened), for admins only: the plugin
 * (index.ts) calls {@link addAdminCommand} at activation and {@link
 * AdminCommand.check} once Lab is restored; the server's `GET me` says whether
 * the caller is an admin (Hub admins, the service's admin users and groups,
 * the owner of a single-user server). Until it says yes the command is
 * hidden, disabled and not in the palette; for a non-admin it stays so (and
 * the admin routes answer 403 anyway).
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { ICaller, whoAmI } from './adminapi';
import { ClusterClient } from './api';
import { getTrans } from './i18n';
import { clusterIcon } from './icons';
import { SessionsModel } from './sessions';

/** The command's id. */
export const ADMIN_COMMAND = 'cluster:admin';

/** The panel module, loaded (a chunk of its own) when the panel first opens. */
const loadPanel = () => import('./adminpanel');

/** The command's state: who the caller is, once the server said. */
export class AdminCommand {
  constructor(
    readonly app: Pick<JupyterFrontEnd, 'commands' | 'shell'>,
    readonly model: SessionsModel,
    readonly palette: Pick<ICommandPalette, 'addItem'> | null
  ) {}

  /** The caller as `GET me` said (null before, or on a server without it). */
  caller: ICaller | null = null;

  /** Whether the caller is an admin (false until the server said so). */
  get isAdmin(): boolean {
    return this.caller?.admin === true;
  }

  /** Ask the server who the caller is; show the command if an admin. */
  async check(): Promise<boolean> {
    try {
      this.caller = await whoAmI(this.model.client);
    } catch (error) {
      console.warn(
        'jupyter-cluster: could not tell whether you are an admin',
        error
      );
      this.caller = null;
    }
    if (this.isAdmin && !this._listed) {
      this._listed = true;
      this.palette?.addItem({
        command: ADMIN_COMMAND,
        category: getTrans().__('Cluster Sessions')
      });
    }
    this.app.commands.notifyCommandChanged(ADMIN_COMMAND);
    return this.isAdmin;
  }

  /** Open (or bring back) the panel; nothing for a non-admin. */
  async open(): Promise<Widget | null> {
    if (!this.isAdmin) {
      return null;
    }
    if (!this._panel || this._panel.isDisposed) {
      const { ClusterAdminPanel } = await loadPanel();
      const { AdminModel } = await import('./adminapi');
      const client = this.model.client as ClusterClient;
      this._panel = new ClusterAdminPanel(this.model, new AdminModel(client));
      this._panel.title.icon = clusterIcon;
    }
    if (!this._panel.isAttached) {
      this.app.shell.add(this._panel, 'main');
    }
    this.app.shell.activateById(this._panel.id);
    return this._panel;
  }

  private _listed = false;
  private _panel: Widget | null = null;
}

/** Register the command (hidden until {@link AdminCommand.check} finds an admin). */
export function addAdminCommand(
  app: Pick<JupyterFrontEnd, 'commands' | 'shell'>,
  model: SessionsModel,
  palette: Pick<ICommandPalette, 'addItem'> | null
): AdminCommand {
  const admin = new AdminCommand(app, model, palette);
  const trans = getTrans();
  app.commands.addCommand(ADMIN_COMMAND, {
    label: trans.__('Cluster Admin'),
    caption: trans.__(
      "Every user's cluster sessions (end one with a reason), the queue, agents, usage and policies"
    ),
    icon: clusterIcon,
    isVisible: () => admin.isAdmin,
    isEnabled: () => admin.isAdmin,
    execute: () => admin.open(),
    describedBy: { args: { type: 'object', properties: {} } }
  });
  return admin;
}
