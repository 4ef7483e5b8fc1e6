/**
 * The data-folders plugin: adds the ClusterFolders drive (./folders-drive) to
 * JupyterLab's contents manager, so `ClusterFolders:folder/notebook.ipynb` opens
 * and saves like any file, and the "Data folders" panel (./folders-panel) to the
 * left area. Its browser joins the file-browser tracker at its first focus, so
 * Lab's file-browser commands (open, rename, delete, download in the context
 * menu) act on it when it has the focus, and Lab's launcher keeps making new
 * files with the default browser until then. Registered next to the main plugin
 * in ./index.
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { ITranslator } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';

// The drive and the panel must exist when the application starts (the panel is in
// the left area, the drive opens restored documents): needed at activation.
/* eslint-disable jupyter/prefer-lazy-imports */
import { ClusterClient } from './api';
import { FoldersClient } from './folders-api';
import { ClusterFoldersDrive } from './folders-drive';
import { createFoldersPanel, FOLDERS_PANEL_ID } from './folders-panel';
import { getTrans } from './i18n';
/* eslint-enable jupyter/prefer-lazy-imports */

/** The panel's icon: a folder holding a data cylinder (unlike Lab's file browser). */
export const dataFolderIcon = new LabIcon({
  name: 'jupyter-cluster:data-folder',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M10 4H4c-1.1 0-2 .9-2 2v12c0 1.1.9 2 2 2h16c1.1 0 2-.9 2-2V8c0-1.1-.9-2-2-2h-8l-2-2z"/>
  <g class="jp-icon-brand0" fill="#1976D2">
    <ellipse cx="15" cy="10.5" rx="4" ry="1.5"/>
    <path d="M11 11.5v5c0 .8 1.8 1.5 4 1.5s4-.7 4-1.5v-5c-.6.8-2.2 1.3-4 1.3s-3.4-.5-4-1.3z"/>
  </g>
</svg>`
});

/** The command that shows the panel. */
export const SHOW_FOLDERS = 'cluster:show-folders';

export const foldersPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-cluster:folders',
  description:
    'Browse, upload, download and open the files of your data folders (a Lab drive and a panel).',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [IFileBrowserFactory, ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    factory: IFileBrowserFactory | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ) => {
    const trans = getTrans();
    const folders = new FoldersClient(
      new ClusterClient(app.serviceManager.serverSettings)
    );
    app.serviceManager.contents.addDrive(new ClusterFoldersDrive(folders));
    const panel = createFoldersPanel({
      docManager,
      folders,
      commands: app.commands,
      translator: translator ?? undefined
    });
    panel.title.icon = dataFolderIcon;
    panel.title.caption = trans.__('Data folders');
    app.shell.add(panel, 'left', { rank: 220 });
    if (factory) {
      // Lab's file-browser commands (its context menu, Delete, F2) act on the
      // tracker's current browser, so this one must be in the tracker when it has
      // the focus. It joins at its first focus, not before: a browser added while
      // nothing has the focus becomes the current one, and Lab's launcher, with
      // the default browser at its top (cwd ''), makes a new notebook in the
      // current browser's folder: the top of this drive, which takes no files
      // (jupyterlab/jupyterlab#15629). A new user's first notebook failed so.
      // The tracker makes a browser that already has the focus when it is added
      // its current one only at the next focus change: the focus steps out while
      // it joins, and back.
      const join = async () => {
        panel.node.removeEventListener('focusin', join, true);
        const focused = document.activeElement as HTMLElement | null;
        focused?.blur();
        await factory.tracker.add(panel);
        focused?.focus();
      };
      panel.node.addEventListener('focusin', join, true);
    }
    if (restorer) {
      restorer.add(panel, 'jupyter-cluster-folders');
    }
    app.commands.addCommand(SHOW_FOLDERS, {
      label: trans.__('Show Data Folders'),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => app.shell.activateById(FOLDERS_PANEL_ID)
    });
  }
};
