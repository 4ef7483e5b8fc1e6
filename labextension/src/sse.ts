/**
 * Incremental parsers for text that arrives in chunks: Server-Sent Events (the
 * events route) and lines (container logs). Chunks may split a message or a line
 * anywhere, even between `\r` and `\n`.
 */

/** One Server-Sent Events message. */
export interface ISSEMessage {
  event: string;
  data: string;
  id: string | null;
}

/** Turns chunks of an event stream into messages (comments are skipped). */
export class SSEParser {
  /** Feed a chunk; returns the messages it completed. */
  push(chunk: string): ISSEMessage[] {
    const messages: ISSEMessage[] = [];
    for (const line of this._lines.push(chunk)) {
      this._line(line, messages);
    }
    return messages;
  }

  private _line(line: string, messages: ISSEMessage[]): void {
    if (line === '') {
      if (this._data.length) {
        messages.push({
          event: this._event || 'message',
          data: this._data.join('\n'),
          id: this._id
        });
      }
      this._event = '';
      this._data = [];
      return;
    }
    if (line.startsWith(':')) {
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    if (field === 'event') {
      this._event = value;
    } else if (field === 'data') {
      this._data.push(value);
    } else if (field === 'id') {
      this._id = value;
    }
  }

  private _lines = new LineSplitter();
  private _event = '';
  private _data: string[] = [];
  private _id: string | null = null;
}

/** Splits chunks of text into whole lines (without their `\n`, `\r\n` or `\r`). */
export class LineSplitter {
  /** Feed a chunk; returns the lines it completed. */
  push(chunk: string): string[] {
    let text = this._rest + chunk;
    if (this._skipLF && text.startsWith('\n')) {
      text = text.slice(1);
    }
    this._skipLF = false;
    const lines: string[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '\n' || c === '\r') {
        lines.push(text.slice(start, i));
        if (c === '\r') {
          if (i + 1 === text.length) {
            this._skipLF = true;
          } else if (text[i + 1] === '\n') {
            i++;
          }
        }
        start = i + 1;
      }
    }
    this._rest = text.slice(start);
    return lines;
  }

  /** The text after the last line break (an unfinished line). */
  get rest(): string {
    return this._rest;
  }

  /** Take the unfinished line as the last one (at the end of a stream). */
  flush(): string[] {
    const rest = this._rest;
    this._rest = '';
    this._skipLF = false;
    return rest ? [rest] : [];
  }

  private _rest = '';
  private _skipLF = false;
}
