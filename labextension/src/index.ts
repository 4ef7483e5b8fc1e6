/**
 * jupyter-cluster's JupyterLab extension: a launcher tile and a dialog to launch
 * cluster sessions, a sidebar that lists them live, a log panel per session,
 * terminals into any container, palette commands, the notebook's session in the
 * status bar, a "Cluster usage" tab and, for admins, a "Cluster admin" panel.
 * It talks to the server extension's REST API under `{baseUrl}cluster/api/`.
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The sidebar shows (and follows the events stream) from the start, and the
// commands must exist when the launcher, palette and menus are built: these
// modules are needed at activation. The heavy parts (the launch dialog, the
// log panel) load when a command first runs.
/* eslint-disable jupyter/prefer-lazy-imports */
import { ClusterClient } from './api';
import { addCommands, CommandIDs, PALETTE_COMMANDS } from './commands';
import { SessionsModel } from './sessions';
import { ClusterSidebar } from './sidebar';
import { getTrans, setTranslator } from './i18n';
import { IClusterSettings, readSettings } from './settings';
import { ClusterIndicatorExtension, revealSession } from './indicator';
import { addStatusItem } from './statusbar';
import { addAdminCommand } from './admincommand';
import { addUsageCommand } from './usagecommand';
import { foldersPlugin } from './folders-plugin';
/* eslint-enable jupyter/prefer-lazy-imports */

const PLUGIN_ID = 'jupyter-cluster:plugin';

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'Launch, watch and use cluster compute sessions (main1, sub1, …) of jupyter-cluster.',
  autoStart: true,
  optional: [
    ILauncher,
    ICommandPalette,
    ISettingRegistry,
    ILayoutRestorer,
    ITranslator,
    IStatusBar
  ],
  activate: (
    app: JupyterFrontEnd,
    launcher: ILauncher | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null,
    statusBar: IStatusBar | null
  ) => {
    setTranslator(translator ?? nullTranslator);
    const trans = getTrans();
    const client = new ClusterClient(app.serviceManager.serverSettings);
    const model = new SessionsModel({ client });
    let settings = readSettings(null);

    const sidebar = new ClusterSidebar(model, app.commands);
    app.shell.add(sidebar, 'left', { rank: 210 });
    if (restorer) {
      restorer.add(sidebar, 'jupyter-cluster-sessions');
    }

    // Each notebook's toolbar, and the status bar for the current one, name
    // the cluster session its kernel runs in; a click shows it in the sidebar.
    const reveal = (sessionId: string) =>
      revealSession(
        () => app.shell.activateById(sidebar.id),
        sidebar,
        sessionId
      );
    app.docRegistry.addWidgetExtension(
      'Notebook',
      new ClusterIndicatorExtension(model, reveal)
    );
    if (statusBar) {
      addStatusItem(statusBar, app.shell, model, reveal);
    }
    // Admins (the server says who is) get the "Cluster admin" panel.
    const admin = addAdminCommand(app, model, palette);
    // Everyone gets "Cluster Usage": their own usage (an admin's: everyone's).
    addUsageCommand(app, client, palette);

    addCommands({
      app,
      model,
      settings: () => settings,
      showSidebar: () => app.shell.activateById(sidebar.id)
    });

    if (launcher) {
      launcher.add({
        command: CommandIDs.launch,
        category: trans.__('Cluster'),
        rank: 0,
        args: { isLauncher: true }
      });
    }
    if (palette) {
      const category = trans.__('Cluster Sessions');
      for (const command of PALETTE_COMMANDS) {
        palette.addItem({ command, category, args: { isPalette: true } });
      }
    }
    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(loaded => {
          const update = () => {
            settings = readSettings(
              loaded.composite as unknown as Partial<IClusterSettings>
            );
          };
          update();
          loaded.changed.connect(update);
        })
        .catch(reason => {
          console.error('jupyter-cluster: could not load the settings', reason);
        });
    }

    void app.restored.then(() => {
      model.start();
      void admin.check();
    });
  }
};

export default [plugin, foldersPlugin];
