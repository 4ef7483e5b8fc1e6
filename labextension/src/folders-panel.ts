/**
 * The "Data folders" panel of the left area: JupyterLab's own file browser on the
 * ClusterFolders drive (./folders-drive), with a toolbar to make a data folder (or
 * a directory in one), a notebook, upload, rename, delete, download and refresh.
 * Uploads (the button, or files dropped on the listing) stream each file as one
 * raw `PUT` and show their progress under the listing; shared folders and their
 * files read "read-only". The data-folders plugin (./folders-plugin) builds it.
 */

import {
  Dialog,
  InputDialog,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import {
  DirListing,
  FileBrowser,
  FilterFileBrowserModel,
  Uploader
} from '@jupyterlab/filebrowser';
import { Contents } from '@jupyterlab/services';
import { ITranslator } from '@jupyterlab/translation';
import {
  deleteIcon,
  downloadIcon,
  editIcon,
  newFolderIcon,
  notebookIcon,
  refreshIcon,
  ToolbarButton
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';

import { DRIVE_NAME } from './folders-drive';
import { FoldersClient } from './folders-api';
import { splitPath, joinPath } from './folders-models';
import { UploadProgress } from './folders-progress';
import { getTrans } from './i18n';

/** The panel's widget id (also its restorer key's target). */
export const FOLDERS_PANEL_ID = 'jp-cluster-folders';

/** Lab's file-browser model whose uploads stream through the folder routes. */
export class FoldersBrowserModel extends FilterFileBrowserModel {
  constructor(
    options: FilterFileBrowserModel.IOptions,
    readonly folders: FoldersClient,
    readonly progress: UploadProgress
  ) {
    super(options);
  }

  /** The open directory's path inside the drive (no `ClusterFolders:`). */
  get localPath(): string {
    return this.manager.services.contents.localPath(this.path);
  }

  /**
   * Upload `file` into the open directory (or `path`, a drive path): the bytes
   * are the body of one `PUT`, never base64 in JSON; progress shows meanwhile.
   */
  async upload(file: File, path?: string): Promise<Contents.IModel> {
    const trans = getTrans();
    const dir = path
      ? this.manager.services.contents.localPath(path)
      : this.localPath;
    const { folder, inner } = splitPath(dir);
    if (!folder) {
      throw new Error(
        trans.__('Open a data folder first: files are uploaded into one.')
      );
    }
    const listing = await this.folders.list(folder, inner);
    if (listing.entries.some(e => e.name === file.name)) {
      const answer = await showDialog({
        title: trans.__('Overwrite file?'),
        body: trans.__(
          '"%1" already exists in %2. Overwrite it?',
          file.name,
          dir
        ),
        buttons: [
          Dialog.cancelButton(),
          Dialog.warnButton({ label: trans.__('Overwrite') })
        ]
      });
      if (!answer.button.accept) {
        throw new Error(trans.__('%1 was not uploaded.', file.name));
      }
    }
    const row = this.progress.start(file.name, file.size);
    try {
      await this.folders.upload(
        folder,
        joinPath(inner, file.name),
        file,
        (sent, total) => row.update(sent, total)
      );
      row.done();
    } catch (error) {
      row.failed(String((error as Error).message ?? error));
      throw error;
    }
    await this.refresh();
    return this.manager.services.contents.get(
      `${DRIVE_NAME}:${joinPath(dir, file.name)}`,
      { content: false }
    );
  }
}

/** Marks read-only entries (shared folders and their files) in the listing. */
export class FoldersRenderer extends DirListing.Renderer {
  updateItemNode(
    node: HTMLElement,
    model: Contents.IModel,
    ...rest: any[]
  ): void {
    (super.updateItemNode as (...args: any[]) => void)(node, model, ...rest);
    const readOnly = model.writable === false;
    const text = node.querySelector<HTMLElement>('.jp-DirListing-itemText');
    for (const target of text ? [node, text] : [node]) {
      if (readOnly) {
        target.dataset.readonly = getTrans().__('read-only');
      } else {
        delete target.dataset.readonly;
      }
    }
  }
}

/** The file browser of the panel, with the upload progress under its listing. */
export class FoldersBrowser extends FileBrowser {
  constructor(options: FileBrowser.IOptions, progress: UploadProgress) {
    super(options);
    this.mainPanel.addWidget(progress);
  }
}

/** What the panel needs from the application. */
export interface IFoldersPanelOptions {
  docManager: IDocumentManager;
  folders: FoldersClient;
  commands: CommandRegistry;
  translator?: ITranslator;
}

/** Build the "Data folders" panel (see the module docstring). */
export function createFoldersPanel(
  options: IFoldersPanelOptions
): FoldersBrowser {
  const trans = getTrans();
  const progress = new UploadProgress();
  const model = new FoldersBrowserModel(
    {
      manager: options.docManager,
      driveName: DRIVE_NAME,
      translator: options.translator,
      refreshInterval: 10000
    },
    options.folders,
    progress
  );
  const browser = new FoldersBrowser(
    {
      id: FOLDERS_PANEL_ID,
      model,
      renderer: new FoldersRenderer(),
      translator: options.translator
    },
    progress
  );
  browser.addClass('jp-ClusterFolders');
  browser.title.caption = trans.__('Data folders');
  const button = (name: string, tooltip: string, widget: ToolbarButton) => {
    widget.addClass(`jp-ClusterFolders-${name}`);
    widget.node.title = tooltip;
    browser.toolbar.addItem(name, widget);
  };
  const act = (run: () => Promise<unknown>) => () => {
    run().catch(error => {
      if (error !== undefined) {
        void showErrorMessage(trans.__('Data folders'), error);
      }
    });
  };
  button(
    'new-folder',
    trans.__('New data folder (or a directory inside the open one)'),
    new ToolbarButton({
      noFocusOnClick: true,
      icon: newFolderIcon,
      onClick: act(() => newFolder(browser, model, options.folders))
    })
  );
  button(
    'new-notebook',
    trans.__('New notebook in the open folder'),
    new ToolbarButton({
      noFocusOnClick: true,
      icon: notebookIcon,
      onClick: act(() =>
        options.commands.execute('notebook:create-new', { cwd: model.path })
      )
    })
  );
  const uploader = new Uploader({ model, translator: options.translator });
  button('upload', trans.__('Upload files into the open folder'), uploader);
  button(
    'rename',
    trans.__('Rename the selected file or directory'),
    new ToolbarButton({
      noFocusOnClick: true,
      icon: editIcon,
      onClick: act(() => browser.rename())
    })
  );
  button(
    'delete',
    trans.__('Delete the selected entries (a data folder with all its files)'),
    new ToolbarButton({
      noFocusOnClick: true,
      icon: deleteIcon,
      onClick: act(() => browser.delete())
    })
  );
  button(
    'download',
    trans.__('Download the selected files'),
    new ToolbarButton({
      noFocusOnClick: true,
      icon: downloadIcon,
      onClick: act(() => browser.download())
    })
  );
  button(
    'refresh',
    trans.__('Refresh'),
    new ToolbarButton({
      noFocusOnClick: true,
      icon: refreshIcon,
      onClick: act(() => model.refresh())
    })
  );
  return browser;
}

/**
 * At the top: ask a name and make that data folder. Inside a folder: a new
 * directory, its name edited in place (Lab's "New Folder").
 */
export async function newFolder(
  browser: FileBrowser,
  model: FoldersBrowserModel,
  folders: FoldersClient
): Promise<void> {
  if (model.localPath) {
    await browser.createNewDirectory();
    return;
  }
  const trans = getTrans();
  const answer = await InputDialog.getText({
    title: trans.__('New data folder'),
    label: trans.__("Name (letters, digits, '.', '_' and '-'):"),
    okLabel: trans.__('Create')
  });
  const name = answer.value?.trim();
  if (!answer.button.accept || !name) {
    return;
  }
  await folders.create(name);
  await model.refresh();
  await browser.selectItemByName(name);
}
