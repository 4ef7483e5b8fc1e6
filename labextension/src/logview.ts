/**
 * The text part of a container's log view, without network: a bounded list of
 * lines rendered into a node, with search (highlighted matches, a current match
 * to step through) and automatic scrolling to the end while following.
 */

/** Matches of a search over lines: per line, where the query occurs. */
export function findMatches(lines: string[], query: string): number[] {
  if (!query) {
    return [];
  }
  const needle = query.toLowerCase();
  const found: number[] = [];
  lines.forEach((line, i) => {
    if (line.toLowerCase().includes(needle)) {
      found.push(i);
    }
  });
  return found;
}

/** `text` as DOM nodes with every (case-insensitive) `query` in a <mark>. */
export function highlight(text: string, query: string): Node[] {
  if (!query) {
    return [document.createTextNode(text)];
  }
  const nodes: Node[] = [];
  const lower = text.toLowerCase();
  const needle = query.toLowerCase();
  let start = 0;
  for (;;) {
    const at = lower.indexOf(needle, start);
    if (at < 0) {
      break;
    }
    if (at > start) {
      nodes.push(document.createTextNode(text.slice(start, at)));
    }
    const mark = document.createElement('mark');
    mark.textContent = text.slice(at, at + query.length);
    nodes.push(mark);
    start = at + query.length;
  }
  if (start < text.length) {
    nodes.push(document.createTextNode(text.slice(start)));
  }
  return nodes;
}

/** Lines shown in `node`, at most `maxLines` (the oldest are dropped). */
export class LogText {
  constructor(
    readonly node: HTMLElement,
    public maxLines = 10000
  ) {
    node.classList.add('jp-ClusterLogs-text');
  }

  get lines(): readonly string[] {
    return this._lines;
  }

  get query(): string {
    return this._query;
  }

  /** Line numbers (in {@link lines}) that match the query. */
  get matches(): readonly number[] {
    return this._matches;
  }

  /** Index in {@link matches} of the current match, or -1. */
  get current(): number {
    return this._current;
  }

  /** Add lines at the end. */
  append(lines: string[]): void {
    if (!lines.length) {
      return;
    }
    const fragment = document.createDocumentFragment();
    for (const line of lines) {
      fragment.appendChild(this._lineNode(line));
    }
    this.node.appendChild(fragment);
    this._lines.push(...lines);
    const excess = this._lines.length - this.maxLines;
    if (excess > 0) {
      this._lines.splice(0, excess);
      for (let i = 0; i < excess && this.node.firstChild; i++) {
        this.node.removeChild(this.node.firstChild);
      }
    }
    if (this._query) {
      this._recount(excess > 0 ? excess : 0);
    }
  }

  /** Remove every line. */
  clear(): void {
    this._lines = [];
    this.node.textContent = '';
    this._matches = [];
    this._current = -1;
  }

  /** Highlight `query` (case-insensitive); the current match becomes the first. */
  search(query: string): void {
    this._query = query;
    const children = this.node.children;
    for (let i = 0; i < this._lines.length; i++) {
      const child = children[i] as HTMLElement | undefined;
      if (child) {
        child.replaceChildren(...highlight(this._lines[i], query));
        child.classList.remove('jp-mod-current');
      }
    }
    this._matches = findMatches(this._lines, query);
    this._current = this._matches.length ? 0 : -1;
    this._markCurrent();
  }

  /** Move the current match by `step` (wrapping) and scroll to it. */
  step(step: number): void {
    if (!this._matches.length) {
      return;
    }
    const n = this._matches.length;
    this._current = (((this._current + step) % n) + n) % n;
    this._markCurrent();
  }

  /** Scroll to the last line. */
  scrollToEnd(): void {
    const scroller = this.node.parentElement ?? this.node;
    scroller.scrollTop = scroller.scrollHeight;
  }

  /** The whole text (for downloads). */
  toString(): string {
    return this._lines.length ? this._lines.join('\n') + '\n' : '';
  }

  private _lineNode(line: string): HTMLElement {
    const div = document.createElement('div');
    div.className = 'jp-ClusterLogs-line';
    div.replaceChildren(...highlight(line, this._query));
    return div;
  }

  private _recount(dropped: number): void {
    const currentLine =
      this._current >= 0 ? this._matches[this._current] - dropped : -1;
    this._matches = findMatches(this._lines, this._query);
    const at = this._matches.indexOf(currentLine);
    this._current = at >= 0 ? at : this._matches.length ? 0 : -1;
  }

  private _markCurrent(): void {
    this.node
      .querySelectorAll('.jp-ClusterLogs-line.jp-mod-current')
      .forEach(n => n.classList.remove('jp-mod-current'));
    if (this._current < 0) {
      return;
    }
    const child = this.node.children[this._matches[this._current]] as
      HTMLElement | undefined;
    if (child) {
      child.classList.add('jp-mod-current');
      if (typeof child.scrollIntoView === 'function') {
        child.scrollIntoView({ block: 'center' });
      }
    }
  }

  private _lines: string[] = [];
  private _query = '';
  private _matches: number[] = [];
  private _current = -1;
}
