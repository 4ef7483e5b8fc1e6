import { LineSplitter, SSEParser } from '../sse';

describe('LineSplitter', () => {
  it('joins lines split across chunks', () => {
    const s = new LineSplitter();
    expect(s.push('hel')).toEqual([]);
    expect(s.push('lo\nwor')).toEqual(['hello']);
    expect(s.push('ld\n\nx')).toEqual(['world', '']);
    expect(s.rest).toBe('x');
    expect(s.flush()).toEqual(['x']);
    expect(s.flush()).toEqual([]);
  });

  it('handles \\r\\n and a \\r at the end of a chunk', () => {
    const s = new LineSplitter();
    expect(s.push('a\r\nb\r')).toEqual(['a', 'b']);
    expect(s.push('\nc\rd\n')).toEqual(['c', 'd']);
  });
});

describe('SSEParser', () => {
  it('parses events, ids and multi-line data, skipping comments', () => {
    const p = new SSEParser();
    const text =
      'event: snapshot\ndata: {"sessions": []}\n\n' +
      ': keepalive\n\n' +
      'id: 7\nevent: session\ndata: {"a":\ndata: 1}\n\n';
    const messages = [];
    for (const chunk of text.match(/.{1,5}/gs)!) {
      messages.push(...p.push(chunk));
    }
    expect(messages).toEqual([
      { event: 'snapshot', data: '{"sessions": []}', id: null },
      { event: 'session', data: '{"a":\n1}', id: '7' }
    ]);
  });

  it('defaults the event name to message', () => {
    expect(new SSEParser().push('data:x\n\n')).toEqual([
      { event: 'message', data: 'x', id: null }
    ]);
  });
});
