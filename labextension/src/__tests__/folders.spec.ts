import { ServerConnection } from '@jupyterlab/services';

import { ClusterClient } from '../api';
import {
  FoldersClient,
  IDataFolder,
  IFolderListing,
  filesParts
} from '../folders-api';
import { ClusterFoldersDrive, DRIVE_NAME, freeName } from '../folders-drive';
import { bodyOf, bytesOf, splitPath } from '../folders-models';
import { UploadProgress } from '../folders-progress';

const enc = (text: string) => new TextEncoder().encode(text);
const dec = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/**
 * Data folders in memory, answering like the server's routes: folder name →
 * { shared, entries: path → bytes, or null for a directory }.
 */
class FakeFolders {
  data = new Map<
    string,
    { shared: boolean; entries: Map<string, Uint8Array | null> }
  >();
  calls: string[] = [];

  add(name: string, shared = false): void {
    this.data.set(name, { shared, entries: new Map() });
  }
  private _folder(name: string) {
    const folder = this.data.get(name);
    if (!folder) {
      throw new Error(`no folder ${name}`);
    }
    return folder;
  }
  private _writable(name: string) {
    const folder = this._folder(name);
    if (folder.shared) {
      throw new Error(`data folder '${name}' is shared and read-only`);
    }
    return folder;
  }
  async folders(): Promise<IDataFolder[]> {
    return [...this.data].map(([name, f]) => ({
      name,
      path: `/d/${name}`,
      shared: f.shared
    }));
  }
  async create(name: string) {
    this.calls.push(`create ${name}`);
    this.add(name);
    return { name, path: `/d/${name}`, shared: false };
  }
  async renameFolder(name: string, to: string) {
    this.calls.push(`renameFolder ${name} ${to}`);
    const folder = this._writable(name);
    if (this.data.has(to)) {
      throw new Error(`a data folder named '${to}' already exists`);
    }
    this.data.delete(name);
    this.data.set(to, folder);
    return { name: to, path: `/d/${to}`, shared: false };
  }
  async remove(name: string) {
    this.calls.push(`remove ${name}`);
    this._writable(name);
    this.data.delete(name);
  }
  async list(name: string, path: string): Promise<IFolderListing> {
    const folder = this._folder(name);
    const prefix = path ? `${path}/` : '';
    const entries = [...folder.entries]
      .filter(
        ([p]) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/')
      )
      .map(([p, bytes]) => ({
        name: p.slice(prefix.length),
        type: bytes === null ? ('directory' as const) : ('file' as const),
        size: bytes?.length ?? 0,
        mtime: 1700000000
      }));
    return { name, path, entries };
  }
  async read(name: string, path: string): Promise<Blob> {
    const bytes = this._folder(name).entries.get(path);
    if (!bytes) {
      throw new Error(`no file ${path}`);
    }
    return new Blob([bytes]);
  }
  async write(name: string, path: string, body: Blob): Promise<number> {
    const bytes = await bytesOf(body);
    this._writable(name).entries.set(path, bytes);
    this.calls.push(`write ${name}/${path}`);
    return bytes.length;
  }
  async mkdir(name: string, path: string) {
    this._writable(name).entries.set(path, null);
    this.calls.push(`mkdir ${name}/${path}`);
  }
  async rename(name: string, path: string, to: string) {
    const entries = this._writable(name).entries;
    entries.set(to, entries.get(path)!);
    entries.delete(path);
    this.calls.push(`rename ${name}/${path} ${to}`);
  }
  async delete(name: string, path: string) {
    this._writable(name).entries.delete(path);
    this.calls.push(`delete ${name}/${path}`);
  }
  downloadUrl(name: string, path: string) {
    return `http://h/cluster/api/folders/${name}/files/${path}?download=1`;
  }
}

function setup() {
  const fake = new FakeFolders();
  fake.add('data');
  fake.add('refs', true);
  fake.data.get('refs')!.entries.set('README.txt', enc('read me\n'));
  const drive = new ClusterFoldersDrive(fake as unknown as FoldersClient);
  const changes: string[] = [];
  drive.fileChanged.connect((_, args) =>
    changes.push(
      `${args.type} ${args.oldValue?.path ?? ''} ${args.newValue?.path ?? ''}`.trim()
    )
  );
  return { fake, drive, changes };
}

describe('the data-folders drive', () => {
  it('lists the data folders at its top, shared ones read-only', async () => {
    const { drive } = setup();
    expect(drive.name).toBe(DRIVE_NAME);
    const top = await drive.get('');
    expect(top.type).toBe('directory');
    expect(top.content.map((m: any) => [m.path, m.type, m.writable])).toEqual([
      ['data', 'directory', true],
      ['refs', 'directory', false]
    ]);
    const refs = await drive.get('refs');
    expect(refs.writable).toBe(false);
    expect(refs.content.map((m: any) => [m.path, m.writable, m.size])).toEqual([
      ['refs/README.txt', false, 8]
    ]);
  });

  it('reads text, notebooks and binary files in the format Lab asks', async () => {
    const { fake, drive } = setup();
    const entries = fake.data.get('data')!.entries;
    entries.set('a.txt', enc('héllo'));
    entries.set('nb.ipynb', enc('{"cells": [], "nbformat": 4}'));
    entries.set('b.bin', new Uint8Array([0xff, 0x00, 0xfe]));
    const text = await drive.get('data/a.txt');
    expect([text.type, text.format, text.content]).toEqual([
      'file',
      'text',
      'héllo'
    ]);
    const nb = await drive.get('/data/nb.ipynb', { type: 'notebook' });
    expect([nb.type, nb.format, nb.content.nbformat]).toEqual([
      'notebook',
      'json',
      4
    ]);
    const bin = await drive.get('data/b.bin');
    expect([bin.format, bin.content]).toEqual(['base64', '/wD+']);
    const meta = await drive.get('data/b.bin', { content: false });
    expect([meta.content, meta.size, meta.last_modified]).toEqual([
      null,
      3,
      new Date(1700000000 * 1000).toISOString()
    ]);
    await expect(drive.get('data/none.txt')).rejects.toMatchObject({
      status: 404
    });
    await expect(drive.get('nowhere/x')).rejects.toMatchObject({ status: 404 });
  });

  it('makes a data folder at the top and untitled entries inside one', async () => {
    const { fake, drive, changes } = setup();
    fake.add('untitled');
    const folder = await drive.newUntitled({ path: '', type: 'directory' });
    expect(folder.path).toBe('untitled-1');
    await expect(
      drive.newUntitled({ path: '', type: 'notebook' })
    ).rejects.toThrow('Only data folders live at the top');
    const dir = await drive.newUntitled({ path: 'data', type: 'directory' });
    expect(dir.path).toBe('data/Untitled Folder');
    const nb = await drive.newUntitled({ path: 'data', type: 'notebook' });
    expect(nb.path).toBe('data/Untitled.ipynb');
    const again = await drive.newUntitled({ path: 'data', type: 'notebook' });
    expect(again.path).toBe('data/Untitled1.ipynb');
    const saved = JSON.parse(
      dec(fake.data.get('data')!.entries.get('Untitled.ipynb')!)
    );
    expect(saved.nbformat).toBe(4);
    expect(changes).toEqual([
      'new  untitled-1',
      'new  data/Untitled Folder',
      'new  data/Untitled.ipynb',
      'new  data/Untitled1.ipynb'
    ]);
  });

  it('saves a notebook as its JSON and reports the saved file', async () => {
    const { fake, drive, changes } = setup();
    const content = {
      cells: [{ cell_type: 'code', source: 'x' }],
      nbformat: 4
    };
    const model = await drive.save('data/nb.ipynb', {
      type: 'notebook',
      format: 'json',
      content
    });
    expect([model.path, model.type, model.content]).toEqual([
      'data/nb.ipynb',
      'notebook',
      null
    ]);
    const written = dec(fake.data.get('data')!.entries.get('nb.ipynb')!);
    expect(JSON.parse(written)).toEqual(content);
    await drive.save('data/b.bin', {
      type: 'file',
      format: 'base64',
      content: '/wD+'
    });
    expect([...fake.data.get('data')!.entries.get('b.bin')!]).toEqual([
      255, 0, 254
    ]);
    await expect(
      drive.save('data/c.bin', { chunk: 1, content: 'AA==' })
    ).rejects.toThrow('Upload with the data-folder panel');
    await expect(
      drive.save('refs/x.txt', { format: 'text', content: 'x' })
    ).rejects.toThrow('read-only');
    expect(changes).toEqual(['save  data/nb.ipynb', 'save  data/b.bin']);
  });

  it('renames whole folders at the top, files inside a folder only', async () => {
    const { fake, drive, changes } = setup();
    fake.data.get('data')!.entries.set('a.txt', enc('a'));
    const folder = await drive.rename('/data/', 'work');
    expect([folder.path, folder.type, folder.writable]).toEqual([
      'work',
      'directory',
      true
    ]);
    expect(fake.calls).toContain('renameFolder data work');
    expect((await drive.get('')).content.map((m: any) => m.path)).toEqual([
      'refs',
      'work'
    ]);
    expect((await drive.get('work')).content.map((m: any) => m.path)).toEqual([
      'work/a.txt'
    ]);
    await expect(drive.rename('refs', 'mine')).rejects.toThrow('read-only');
    await expect(drive.rename('work', 'refs')).rejects.toThrow(
      'already exists'
    );
    await expect(drive.rename('work', 'refs/work')).rejects.toThrow(
      'renamed at the top'
    );
    await expect(drive.rename('work/a.txt', 'b.txt')).rejects.toThrow(
      'renamed at the top'
    );
    await drive.rename('work', 'data');
    expect(changes).toEqual(['rename data work', 'rename work data']);
  });

  it('renames inside a folder only, and deletes files or whole folders', async () => {
    const { fake, drive, changes } = setup();
    fake.data.get('data')!.entries.set('a.txt', enc('a'));
    const renamed = await drive.rename('data/a.txt', 'data/b.txt');
    expect(renamed.path).toBe('data/b.txt');
    expect(fake.calls).toContain('rename data/a.txt b.txt');
    await expect(drive.rename('data/b.txt', 'refs/b.txt')).rejects.toThrow(
      'only inside their data folder'
    );
    await drive.delete('data/b.txt');
    expect(fake.calls).toContain('delete data/b.txt');
    await drive.delete('data');
    expect(fake.data.has('data')).toBe(false);
    await expect(drive.delete('refs')).rejects.toThrow('read-only');
    expect(changes).toEqual([
      'rename data/a.txt data/b.txt',
      'delete data/b.txt',
      'delete data'
    ]);
  });

  it('copies a file under a free name and keeps no checkpoints', async () => {
    const { fake, drive } = setup();
    fake.data.get('data')!.entries.set('a.txt', enc('a'));
    const copy = await drive.copy('data/a.txt', 'data');
    expect(copy.path).toBe('data/a-Copy1.txt');
    const copy2 = await drive.copy('refs/README.txt', 'data');
    expect(copy2.path).toBe('data/README-Copy1.txt');
    expect(await drive.listCheckpoints()).toEqual([]);
    const checkpoint = await drive.createCheckpoint('data/a.txt');
    expect(checkpoint.id).toBe('current');
    expect(await drive.getDownloadUrl('data/a.txt')).toBe(
      'http://h/cluster/api/folders/data/files/a.txt?download=1'
    );
    await expect(drive.getDownloadUrl('data')).rejects.toThrow(
      'Download files'
    );
  });
});

describe('the data-folder routes client', () => {
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://h/base/',
    token: 'tok'
  });
  const folders = new FoldersClient(new ClusterClient(settings));

  afterEach(() => jest.restoreAllMocks());

  it('addresses each path segment of a file', async () => {
    expect(filesParts('data', '/a b/c.txt')).toEqual([
      'folders',
      'data',
      'files',
      'a b',
      'c.txt'
    ]);
    expect(folders.downloadUrl('data', 'a b/c.txt')).toBe(
      'http://h/base/cluster/api/folders/data/files/a%20b/c.txt?download=1'
    );
    const spy = jest.spyOn(ServerConnection, 'makeRequest').mockResolvedValue({
      status: 200,
      ok: true,
      text: async () => '{}'
    } as unknown as Response);
    await folders.rename('data', 'a.txt', 'sub/b.txt');
    await folders.renameFolder('data', 'work');
    await folders.mkdir('data', 'sub');
    await folders.delete('data', 'sub');
    expect(
      spy.mock.calls.map(([url, init]) => [url, init.method, init.body])
    ).toEqual([
      [
        'http://h/base/cluster/api/folders/data/files/a.txt',
        'PATCH',
        '{"to":"sub/b.txt"}'
      ],
      ['http://h/base/cluster/api/folders/data', 'PATCH', '{"name":"work"}'],
      [
        'http://h/base/cluster/api/folders/data/files/sub?mkdir=1',
        'POST',
        undefined
      ],
      [
        'http://h/base/cluster/api/folders/data/files/sub?recursive=1',
        'DELETE',
        undefined
      ]
    ]);
  });

  it('uploads the raw bytes in one PUT and reports progress', async () => {
    const sent: any[] = [];
    class FakeXHR {
      upload: any = {};
      status = 0;
      statusText = '';
      responseText = '';
      headers: Record<string, string> = {};
      withCredentials = false;
      onload: () => void = () => undefined;
      onerror: () => void = () => undefined;
      onabort: () => void = () => undefined;
      open(method: string, url: string) {
        sent.push([method, url]);
      }
      setRequestHeader(key: string, value: string) {
        this.headers[key] = value;
      }
      send(body: Blob) {
        sent.push(this.headers, body);
        this.upload.onprogress({ loaded: 2, total: 5, lengthComputable: true });
        this.status = 201;
        this.responseText = '{"size": 5}';
        this.onload();
      }
      abort() {
        this.onabort();
      }
    }
    jest
      .spyOn(window, 'XMLHttpRequest')
      .mockImplementation(() => new FakeXHR() as unknown as XMLHttpRequest);
    const file = new Blob([enc('hello')]);
    const progress: number[][] = [];
    const size = await folders.upload('data', 'sub/h.txt', file, (a, b) =>
      progress.push([a, b])
    );
    expect(size).toBe(5);
    expect(sent[0]).toEqual([
      'PUT',
      'http://h/base/cluster/api/folders/data/files/sub/h.txt'
    ]);
    expect(sent[1]).toMatchObject({
      Authorization: 'token tok',
      'Content-Type': 'application/octet-stream'
    });
    expect(sent[2]).toBe(file);
    expect(progress).toEqual([
      [2, 5],
      [5, 5]
    ]);
  });
});

describe('the upload rows', () => {
  it('show the percentage, then done or the error', () => {
    jest.useFakeTimers();
    const progress = new UploadProgress();
    const row = progress.start('big.bin', 4 * 1024 * 1024);
    row.update(1024 * 1024, 4 * 1024 * 1024);
    expect(row.node.dataset.progress).toBe('25');
    expect(row.node.querySelector('progress')!.value).toBe(25);
    expect(row.node.textContent).toContain('25% · 1m / 4m');
    row.done();
    expect(row.node.dataset.state).toBe('done');
    expect(progress.node.children.length).toBe(1);
    jest.runAllTimers();
    expect(progress.node.children.length).toBe(0);
    const failed = progress.start('x.bin', 10);
    failed.failed('data folder is shared and read-only');
    jest.runAllTimers();
    expect(progress.node.textContent).toContain('shared and read-only');
    (failed.node.querySelector('button') as HTMLButtonElement).click();
    expect(progress.node.children.length).toBe(0);
    jest.useRealTimers();
  });

  it('name free entries and split drive paths', () => {
    expect(
      freeName('Untitled', '.ipynb', new Set(['Untitled.ipynb']), '')
    ).toBe('Untitled1.ipynb');
    expect(splitPath('/data/a/b.txt/')).toEqual({
      folder: 'data',
      inner: 'a/b.txt'
    });
    expect(splitPath('')).toEqual({ folder: '', inner: '' });
  });

  it('write a notebook as indented JSON', async () => {
    const blob = bodyOf({ type: 'notebook', content: { cells: [] } });
    expect(dec(await bytesOf(blob))).toBe('{\n "cells": []\n}\n');
  });
});
