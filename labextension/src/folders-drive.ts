/**
 * The "ClusterFolders" Contents drive: the user's data folders as a JupyterLab
 * drive, so Lab's file browser, document manager and notebooks work on them
 * (`ClusterFolders:data/train.ipynb` opens and saves like any notebook). The top
 * of the drive lists the data folders (shared ones read-only; renamed there, a
 * folder is renamed on the server); below each, its files. Every operation is a
 * call of ./folders-api. The data-folders plugin
 * (./folders-plugin) adds it to the application's contents manager.
 */

import { Contents, ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { ClusterAPIError } from './api';
import { FoldersClient, IFolderEntry, trimPath } from './folders-api';
import {
  baseName,
  bodyOf,
  directoryModel,
  EMPTY_NOTEBOOK,
  entryModel,
  folderModel,
  freeName,
  joinPath,
  renameKind,
  splitPath,
  withContent
} from './folders-models';

export { freeName };

/** The drive's name: paths in Lab read `ClusterFolders:folder/file`. */
export const DRIVE_NAME = 'ClusterFolders';

/** Data folders as a Lab Contents drive (see the module docstring). */
export class ClusterFoldersDrive implements Contents.IDrive {
  readonly name = DRIVE_NAME;

  constructor(readonly folders: FoldersClient) {}

  /** The Jupyter server's settings (those of the folder routes' client). */
  get serverSettings(): ServerConnection.ISettings {
    return this.folders.client.serverSettings;
  }

  /** Emitted after each change this drive makes (Lab's file browser follows it). */
  get fileChanged(): ISignal<this, Contents.IChangedArgs> {
    return this._fileChanged;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  dispose(): void {
    if (!this._isDisposed) {
      this._isDisposed = true;
      Signal.clearData(this);
    }
  }

  /** A directory's listing or a file's model (with its content unless told not). */
  async get(
    localPath: string,
    options: Contents.IFetchOptions = {}
  ): Promise<Contents.IModel> {
    const path = trimPath(localPath);
    const { folder, inner } = splitPath(path);
    if (!folder) {
      const all = await this._listFolders();
      return {
        ...directoryModel('', true),
        content: all.map(folderModel),
        format: 'json'
      };
    }
    const writable = await this._writable(folder);
    const model = inner
      ? await this._entry(folder, inner, writable)
      : directoryModel(folder, writable);
    if (options.content === false) {
      return model;
    }
    if (model.type === 'directory') {
      const listing = await this.folders.list(folder, inner);
      const content = listing.entries.map(e => entryModel(path, e, writable));
      return { ...model, content, format: 'json' };
    }
    return withContent(model, await this.folders.read(folder, inner), options);
  }

  /** Where the browser downloads a file of a folder (an attachment). */
  async getDownloadUrl(localPath: string): Promise<string> {
    const { folder, inner } = splitPath(trimPath(localPath));
    if (!inner) {
      throw new ClusterAPIError('Download files, not whole data folders.', 400);
    }
    return this.folders.downloadUrl(folder, inner);
  }

  /**
   * A new directory, file or notebook in `options.path`: at the top of the drive a
   * new data folder (`untitled`, `untitled-1`, …), inside one an "Untitled" entry.
   */
  async newUntitled(
    options: Contents.ICreateOptions = {}
  ): Promise<Contents.IModel> {
    const dir = trimPath(options.path ?? '');
    const { folder, inner } = splitPath(dir);
    const type = options.type ?? 'file';
    if (!folder) {
      if (type !== 'directory') {
        throw topLevelError();
      }
      const taken = new Set((await this._listFolders()).map(f => f.name));
      const name = freeName('untitled', '', taken, '-');
      await this.folders.create(name);
      return this._changed(
        'new',
        null,
        await this.get(name, { content: false })
      );
    }
    const listing = await this.folders.list(folder, inner);
    const taken = new Set(listing.entries.map(e => e.name));
    let name: string;
    if (type === 'directory') {
      name = freeName('Untitled Folder', '', taken, ' ');
      await this.folders.mkdir(folder, joinPath(inner, name));
    } else {
      const ext = type === 'notebook' ? '.ipynb' : (options.ext ?? '.txt');
      name = freeName(
        type === 'notebook' ? 'Untitled' : 'untitled',
        ext,
        taken,
        ''
      );
      const content = type === 'notebook' ? EMPTY_NOTEBOOK : '';
      await this.folders.write(
        folder,
        joinPath(inner, name),
        bodyOf({ type, content })
      );
    }
    const created = await this.get(joinPath(dir, name), { content: false });
    return this._changed('new', null, created);
  }

  /** Delete a file or directory; at the top, the whole data folder. */
  async delete(localPath: string): Promise<void> {
    const path = trimPath(localPath);
    const { folder, inner } = splitPath(path);
    if (!folder) {
      throw topLevelError();
    }
    await (inner
      ? this.folders.delete(folder, inner)
      : this.folders.remove(folder));
    this._changed('delete', { path }, null);
  }

  /**
   * At the top, rename a data folder itself (the server refuses a shared one, or one
   * a running session mounts); below, rename or move inside one data folder.
   */
  async rename(oldPath: string, newPath: string): Promise<Contents.IModel> {
    const [path, target] = [trimPath(oldPath), trimPath(newPath)];
    const [from, to] = [splitPath(path), splitPath(target)];
    if (renameKind(from, to) === 'folder') {
      await this.folders.renameFolder(from.folder, to.folder);
      this._shared.delete(from.folder);
    } else {
      await this.folders.rename(from.folder, from.inner, to.inner);
    }
    const model = await this.get(target, { content: false });
    return this._changed('rename', { path }, model);
  }

  /** Write a file or notebook (Lab's save); a directory model makes the directory. */
  async save(
    localPath: string,
    options: Partial<Contents.IModel> = {}
  ): Promise<Contents.IModel> {
    const path = trimPath(localPath);
    const { folder, inner } = splitPath(path);
    if (!inner) {
      throw topLevelError();
    }
    if (options.chunk !== undefined) {
      throw new ClusterAPIError(
        'Upload with the data-folder panel: it streams the file in one request.',
        400
      );
    }
    if (options.type === 'directory') {
      await this.folders.mkdir(folder, inner);
    } else {
      await this.folders.write(folder, inner, bodyOf(options));
    }
    return this._changed(
      'save',
      null,
      await this.get(path, { content: false })
    );
  }

  /** Copy a file into directory `toDir` of the drive (read, then written there). */
  async copy(localPath: string, toDir: string): Promise<Contents.IModel> {
    const from = splitPath(trimPath(localPath));
    const dir = trimPath(toDir);
    const target = splitPath(dir);
    if (!from.inner || !target.folder) {
      throw topLevelError();
    }
    const blob = await this.folders.read(from.folder, from.inner);
    const listing = await this.folders.list(target.folder, target.inner);
    const name = baseName(from.inner);
    const dot = name.lastIndexOf('.');
    const [stem, ext] =
      dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    const taken = new Set(listing.entries.map(e => e.name));
    const copyName = freeName(`${stem}-Copy`, ext, taken, '', 1);
    await this.folders.write(
      target.folder,
      joinPath(target.inner, copyName),
      blob
    );
    const model = await this.get(joinPath(dir, copyName), { content: false });
    return this._changed('new', null, model);
  }

  /** Data folders keep no checkpoints: this one names the file as it is now. */
  async createCheckpoint(
    localPath: string
  ): Promise<Contents.ICheckpointModel> {
    const model = await this.get(localPath, { content: false });
    return { id: 'current', last_modified: model.last_modified };
  }

  /** None: data folders keep no checkpoints. */
  async listCheckpoints(): Promise<Contents.ICheckpointModel[]> {
    return [];
  }

  /** Refused: there is no checkpoint to go back to. */
  async restoreCheckpoint(): Promise<void> {
    throw new ClusterAPIError('Data folders keep no checkpoints.', 400);
  }

  /** Nothing to delete. */
  async deleteCheckpoint(): Promise<void> {
    return;
  }

  private async _listFolders() {
    const all = await this.folders.folders();
    this._shared = new Map(all.map(f => [f.name, f.shared]));
    return all;
  }

  /** Whether `folder` may be written (shared folders are read-only). */
  private async _writable(folder: string): Promise<boolean> {
    if (!this._shared.has(folder)) {
      await this._listFolders();
    }
    const shared = this._shared.get(folder);
    if (shared === undefined) {
      throw new ClusterAPIError(`There is no data folder "${folder}".`, 404);
    }
    return !shared;
  }

  /** The model of `inner` (not the top) of `folder`, from its directory's listing. */
  private async _entry(
    folder: string,
    inner: string,
    writable: boolean
  ): Promise<Contents.IModel> {
    const parent = inner.split('/').slice(0, -1).join('/');
    const listing = await this.folders.list(folder, parent);
    const entry = listing.entries.find(
      (e: IFolderEntry) => e.name === baseName(inner)
    );
    if (!entry) {
      throw new ClusterAPIError(`No such file: ${folder}/${inner}`, 404);
    }
    return entryModel(joinPath(folder, parent), entry, writable);
  }

  private _changed(
    type: Contents.IChangedArgs['type'],
    oldValue: Partial<Contents.IModel> | null,
    newValue: Contents.IModel | null
  ): Contents.IModel {
    this._fileChanged.emit({ type, oldValue, newValue });
    return newValue as Contents.IModel;
  }

  private _fileChanged = new Signal<this, Contents.IChangedArgs>(this);
  private _isDisposed = false;
  private _shared = new Map<string, boolean>();
}

function topLevelError(): ClusterAPIError {
  return new ClusterAPIError(
    'Only data folders live at the top: open one (or make one) and put files in it.',
    400
  );
}
