/**
 * The client of the server extension's data-folder routes (`folders`,
 * `folders/{name}` and `folders/{name}/files/{path}`, see
 * `jupyter_cluster/server/openapi.json`). The Contents drive of ./folders-drive
 * calls it for every file operation; uploads go through `upload`, which streams
 * the file's bytes as the raw body of one `PUT` and reports its progress.
 */

import { ClusterAPIError, ClusterClient, errorOf } from './api';

/** A data folder as `GET folders` lists it. */
export interface IDataFolder {
  name: string;
  path: string;
  /** One of the shared folders: read-only. */
  shared: boolean;
}

/** One entry of a directory inside a data folder. */
export interface IFolderEntry {
  name: string;
  type: 'file' | 'directory' | 'link' | 'other';
  size: number;
  /** Seconds since the epoch. */
  mtime: number;
}

/** A directory inside a data folder as `GET folders/{name}/files[/{path}]` lists it. */
export interface IFolderListing {
  name: string;
  path: string;
  entries: IFolderEntry[];
}

/** Called while an upload runs with the bytes sent so far and the total. */
export type ProgressCallback = (loaded: number, total: number) => void;

/** Talks to the data-folder routes; one per drive. */
export class FoldersClient {
  constructor(readonly client: ClusterClient) {}

  /** This user's data folders and the shared ones. */
  folders(): Promise<IDataFolder[]> {
    return this.client.request<IDataFolder[]>(['folders']);
  }

  /** Make a new data folder `name`. */
  create(name: string): Promise<IDataFolder> {
    return this.client.request<IDataFolder>(['folders'], {
      method: 'POST',
      body: JSON.stringify({ name })
    });
  }

  /** Give data folder `name` the name `to` (`PATCH folders/{name}`); the folder. */
  renameFolder(name: string, to: string): Promise<IDataFolder> {
    return this.client.request<IDataFolder>(['folders', name], {
      method: 'PATCH',
      body: JSON.stringify({ name: to })
    });
  }

  /** Remove data folder `name` and everything in it. */
  remove(name: string): Promise<void> {
    return this.client.request<void>(['folders', name], { method: 'DELETE' });
  }

  /** The entries of directory `path` ('' for the top) of folder `name`. */
  list(name: string, path: string): Promise<IFolderListing> {
    return this.client.request<IFolderListing>(filesParts(name, path));
  }

  /** The bytes of file `path` of folder `name`. */
  async read(name: string, path: string): Promise<Blob> {
    const response = await this.client.fetch(filesParts(name, path), {
      cache: 'no-store'
    });
    return response.blob();
  }

  /** Write `body` as file `path` of folder `name` (replacing it); its size. */
  async write(name: string, path: string, body: Blob): Promise<number> {
    const answer = await this.client.request<{ size: number }>(
      filesParts(name, path),
      { method: 'PUT', body }
    );
    return answer.size;
  }

  /** Make directory `path` in folder `name`. */
  mkdir(name: string, path: string): Promise<void> {
    return this.client.request<void>(
      filesParts(name, path),
      { method: 'POST' },
      '?mkdir=1'
    );
  }

  /** Rename or move `path` to `to`, both inside folder `name`. */
  rename(name: string, path: string, to: string): Promise<void> {
    return this.client.request<void>(filesParts(name, path), {
      method: 'PATCH',
      body: JSON.stringify({ to })
    });
  }

  /** Delete file or directory `path` (with what it holds) of folder `name`. */
  delete(name: string, path: string): Promise<void> {
    return this.client.request<void>(
      filesParts(name, path),
      { method: 'DELETE' },
      '?recursive=1'
    );
  }

  /** Where the browser downloads file `path` of folder `name` (an attachment). */
  downloadUrl(name: string, path: string): string {
    return this.client.url(...filesParts(name, path)) + '?download=1';
  }

  /**
   * Upload `file` as `path` of folder `name`: its bytes are the raw body of one
   * `PUT` (the server streams them to disk), `onProgress` follows the bytes sent.
   * Resolves with the size the server wrote; `signal` aborts it.
   */
  upload(
    name: string,
    path: string,
    file: Blob,
    onProgress: ProgressCallback,
    signal?: AbortSignal
  ): Promise<number> {
    const settings = this.client.serverSettings;
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', this.client.url(...filesParts(name, path)));
    for (const [key, value] of Object.entries(authHeaders(settings.token))) {
      xhr.setRequestHeader(key, value);
    }
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.withCredentials = true;
    return new Promise<number>((resolve, reject) => {
      xhr.upload.onprogress = event =>
        onProgress(
          event.loaded,
          event.lengthComputable ? event.total : file.size
        );
      xhr.onload = () => {
        if (xhr.status >= 200 && xhr.status < 300) {
          onProgress(file.size, file.size);
          resolve(
            Number(JSON.parse(xhr.responseText || '{}').size ?? file.size)
          );
          return;
        }
        const response = new Response(xhr.responseText, {
          status: xhr.status,
          statusText: xhr.statusText
        });
        void errorOf(response).then(reject, reject);
      };
      xhr.onerror = () =>
        reject(
          new ClusterAPIError(
            'The upload failed: the server did not answer.',
            0
          )
        );
      xhr.onabort = () =>
        reject(new ClusterAPIError('The upload was cancelled.', 0));
      signal?.addEventListener('abort', () => xhr.abort());
      xhr.send(file);
    });
  }
}

/** The route parts of `folders/{name}/files[/{path}]`, one per path segment. */
export function filesParts(name: string, path: string): string[] {
  return ['folders', name, 'files', ...path.split('/').filter(p => p !== '')];
}

/** The headers `ServerConnection.makeRequest` adds: the token and the XSRF cookie. */
export function authHeaders(token: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (token) {
    headers['Authorization'] = `token ${token}`;
  }
  let cookie = '';
  try {
    cookie = document.cookie;
  } catch {
    // no cookies (e.g. a sandboxed frame)
  }
  const xsrf = cookie.match('\\b_xsrf=([^;]*)\\b');
  if (xsrf) {
    headers['X-XSRFToken'] = decodeURIComponent(xsrf[1]);
  }
  return headers;
}

/** `path` without its leading and trailing slashes. */
export function trimPath(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}
