/**
 * The command "Cluster Usage" (`cluster:usage`), for every user: it opens the
 * usage tab (./usageview, loaded when first opened) with the caller's own
 * usage, an admin's everyone's. The plugin (index.ts) calls
 * {@link addUsageCommand} at activation; the command is in the palette under
 * "Cluster Sessions".
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { ClusterClient } from './api';
import { getTrans } from './i18n';
import { clusterIcon } from './icons';

/** The command's id. */
export const USAGE_COMMAND = 'cluster:usage';

/** Register the command (and its palette item); returns a function that opens the tab. */
export function addUsageCommand(
  app: Pick<JupyterFrontEnd, 'commands' | 'shell'>,
  client: Pick<ClusterClient, 'request'>,
  palette: Pick<ICommandPalette, 'addItem'> | null
): () => Promise<Widget> {
  const trans = getTrans();
  let panel: Widget | null = null;
  const open = async (): Promise<Widget> => {
    if (!panel || panel.isDisposed) {
      const { ClusterUsagePanel } = await import('./usageview');
      panel = new ClusterUsagePanel(client);
      panel.title.icon = clusterIcon;
    }
    if (!panel.isAttached) {
      app.shell.add(panel, 'main');
    }
    app.shell.activateById(panel.id);
    return panel;
  };
  app.commands.addCommand(USAGE_COMMAND, {
    label: trans.__('Cluster Usage'),
    caption: trans.__(
      'The CPU-, memory- and GPU-hours your cluster sessions were allocated and the CPU time they used'
    ),
    icon: clusterIcon,
    execute: () => open(),
    describedBy: { args: { type: 'object', properties: {} } }
  });
  palette?.addItem({
    command: USAGE_COMMAND,
    category: trans.__('Cluster Sessions')
  });
  return open;
}
