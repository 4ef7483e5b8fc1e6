/**
 * The progress of the data-folder panel's uploads: one row per file under the
 * listing (name, a progress bar, the percentage or what went wrong). The panel's
 * browser model (./folders-panel) starts a row per upload and updates it as the
 * bytes are sent; a finished row goes after a few seconds, a failed one stays
 * until it is closed.
 */

import { Widget } from '@lumino/widgets';

import { getTrans } from './i18n';
import { formatSizeShort } from './units';

/** How long a finished upload's row stays, in ms. */
export const DONE_LINGER = 4000;

/** One upload's row. */
export class UploadRow {
  readonly node: HTMLElement;

  constructor(
    readonly name: string,
    readonly size: number,
    private readonly _remove: (row: UploadRow) => void
  ) {
    this.node = document.createElement('div');
    this.node.className = 'jp-ClusterFolders-uploadRow';
    this.node.dataset.name = name;
    const label = document.createElement('span');
    label.className = 'jp-ClusterFolders-uploadName';
    label.textContent = name;
    this._bar = document.createElement('progress');
    this._bar.max = 100;
    this._bar.value = 0;
    this._text = document.createElement('span');
    this._text.className = 'jp-ClusterFolders-uploadText';
    this.node.append(label, this._bar, this._text);
    this.update(0, size);
  }

  /** `sent` of `total` bytes are on their way. */
  update(sent: number, total: number): void {
    const percent =
      total > 0 ? Math.min(100, Math.floor((sent * 100) / total)) : 0;
    this._bar.value = percent;
    this.node.dataset.progress = String(percent);
    this._text.textContent = `${percent}% · ${formatSizeShort(sent)} / ${formatSizeShort(total)}`;
  }

  /** The server has the whole file. */
  done(): void {
    this.update(this.size, this.size);
    this.node.dataset.state = 'done';
    this._text.textContent = getTrans().__(
      'uploaded, %1',
      formatSizeShort(this.size)
    );
    setTimeout(() => this._remove(this), DONE_LINGER);
  }

  /** The upload failed with `message`; the row stays until closed. */
  failed(message: string): void {
    this.node.dataset.state = 'failed';
    this._text.textContent = message;
    const close = document.createElement('button');
    close.className = 'jp-ClusterFolders-uploadClose';
    close.textContent = '×';
    close.title = getTrans().__('Dismiss');
    close.onclick = () => this._remove(this);
    this.node.append(close);
  }

  private _bar: HTMLProgressElement;
  private _text: HTMLElement;
}

/** The list of upload rows (empty, so invisible, when nothing uploads). */
export class UploadProgress extends Widget {
  constructor() {
    super();
    this.addClass('jp-ClusterFolders-uploads');
    this.node.setAttribute('aria-live', 'polite');
  }

  /** A row for a new upload of `name` (`size` bytes). */
  start(name: string, size: number): UploadRow {
    const row = new UploadRow(name, size, r => r.node.remove());
    this.node.append(row.node);
    return row;
  }
}
