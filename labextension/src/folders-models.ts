/**
 * Turning what the data-folder routes answer into JupyterLab contents models
 * (`Contents.IModel`), and a model's content into the bytes to write. Used by the
 * data-folders drive (./folders-drive): data folders are the directories at the
 * top of the drive, their files and directories below them.
 */

import { Contents } from '@jupyterlab/services';

import { ClusterAPIError } from './api';
import { IDataFolder, IFolderEntry } from './folders-api';

/** A drive path split into the data folder and the path inside it. */
export interface IDrivePath {
  /** '' at the top of the drive (where the folders are listed). */
  folder: string;
  /** '' for the folder's own top. */
  inner: string;
}

/** Split `folder/inner/path` (no drive prefix, slashes trimmed). */
export function splitPath(path: string): IDrivePath {
  const parts = path.split('/').filter(p => p !== '');
  return { folder: parts[0] ?? '', inner: parts.slice(1).join('/') };
}

/**
 * What renaming `from` to `to` is on the drive: a whole data folder's rename (both
 * at the top) or a move inside one folder; anything else is refused.
 */
export function renameKind(
  from: IDrivePath,
  to: IDrivePath
): 'folder' | 'inner' {
  if (!from.inner && !to.inner && from.folder && to.folder) {
    return 'folder';
  }
  if (!from.inner || !to.inner) {
    throw new ClusterAPIError(
      'A data folder is renamed at the top of the drive, files and directories inside it.',
      400
    );
  }
  if (from.folder !== to.folder) {
    throw new ClusterAPIError(
      'Files move only inside their data folder: download and upload them to copy them to another.',
      400
    );
  }
  return 'inner';
}

/** The last segment of `path`. */
export function baseName(path: string): string {
  const parts = path.split('/').filter(p => p !== '');
  return parts[parts.length - 1] ?? '';
}

/** `dir/name`, leaving out an empty side (`name` at the top). */
export function joinPath(dir: string, name: string): string {
  return [dir, name].filter(p => p !== '').join('/');
}

/** An ISO time, or '' when unknown (Lab then shows no date). */
function isoTime(seconds: number | undefined): string {
  return seconds === undefined ? '' : new Date(seconds * 1000).toISOString();
}

/** A directory model without content: the drive's top, or a data folder. */
export function directoryModel(
  path: string,
  writable: boolean,
  mtime?: number
): Contents.IModel {
  return {
    name: baseName(path),
    path,
    type: 'directory',
    writable,
    created: isoTime(mtime),
    last_modified: isoTime(mtime),
    mimetype: '',
    content: null,
    format: null
  };
}

/** The model of data folder `folder` in the drive's top listing. */
export function folderModel(folder: IDataFolder): Contents.IModel {
  return directoryModel(folder.name, !folder.shared);
}

/** The content type Lab opens an entry as: notebooks by their suffix. */
export function contentType(entry: IFolderEntry): Contents.ContentType {
  if (entry.type === 'directory') {
    return 'directory';
  }
  return entry.name.endsWith('.ipynb') ? 'notebook' : 'file';
}

/** The model (without content) of `entry`, which lives in directory `dir`. */
export function entryModel(
  dir: string,
  entry: IFolderEntry,
  writable: boolean
): Contents.IModel {
  const type = contentType(entry);
  return {
    name: entry.name,
    path: joinPath(dir, entry.name),
    type,
    writable,
    created: isoTime(entry.mtime),
    last_modified: isoTime(entry.mtime),
    mimetype: type === 'file' ? 'application/octet-stream' : '',
    content: null,
    format: null,
    size: entry.size
  };
}

/**
 * The content of a file model read as `blob`: a notebook's JSON, text when asked
 * for (or when it decodes as UTF-8 and no format was asked), else base64.
 */
export async function withContent(
  model: Contents.IModel,
  blob: Blob,
  options: Contents.IFetchOptions
): Promise<Contents.IModel> {
  const bytes = await bytesOf(blob);
  if (model.type === 'notebook' && options.type !== 'file') {
    const text = new TextDecoder().decode(bytes);
    return { ...model, format: 'json', content: JSON.parse(text) };
  }
  let text: string | null = null;
  if (options.format !== 'base64') {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = options.format === 'text' ? new TextDecoder().decode(bytes) : null;
    }
  }
  if (text !== null) {
    return {
      ...model,
      type: 'file',
      format: 'text',
      mimetype: 'text/plain',
      content: text
    };
  }
  return { ...model, type: 'file', format: 'base64', content: toBase64(bytes) };
}

/** The bytes to write for a model Lab saves (notebook, text or base64 file). */
export function bodyOf(options: Partial<Contents.IModel>): Blob {
  if (options.type === 'notebook' || options.format === 'json') {
    return new Blob([JSON.stringify(options.content ?? {}, null, 1) + '\n']);
  }
  if (options.format === 'base64') {
    return new Blob([fromBase64(String(options.content ?? ''))]);
  }
  return new Blob([String(options.content ?? '')]);
}

/** `stem + ext`, or the first of `stem{sep}1 + ext`, … not in `taken`. */
export function freeName(
  stem: string,
  ext: string,
  taken: Set<string>,
  sep: string,
  from = 0
): string {
  for (let i = from; ; i++) {
    const name = i === 0 ? `${stem}${ext}` : `${stem}${sep}${i}${ext}`;
    if (!taken.has(name)) {
      return name;
    }
  }
}

/** An empty notebook, as Lab's "New Notebook" expects one. */
export const EMPTY_NOTEBOOK = {
  cells: [],
  metadata: {},
  nbformat: 4,
  nbformat_minor: 5
};

/** The bytes of `blob` (FileReader where Blob has no arrayBuffer). */
export function bytesOf(blob: Blob): Promise<Uint8Array> {
  if (typeof blob.arrayBuffer === 'function') {
    return blob.arrayBuffer().then(buffer => new Uint8Array(buffer));
  }
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(new Uint8Array(reader.result as ArrayBuffer));
    reader.onerror = () => reject(reader.error);
    reader.readAsArrayBuffer(blob);
  });
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}
