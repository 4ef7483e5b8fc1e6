import { findMatches, highlight, LogText } from '../logview';

describe('findMatches', () => {
  it('finds lines case-insensitively', () => {
    expect(findMatches(['Alpha', 'beta', 'ALPHABET'], 'alpha')).toEqual([0, 2]);
    expect(findMatches(['x'], '')).toEqual([]);
  });
});

describe('highlight', () => {
  it('marks every occurrence, keeping the text', () => {
    const div = document.createElement('div');
    div.append(...highlight('a Ready, ready!', 'ready'));
    expect(div.innerHTML).toBe('a <mark>Ready</mark>, <mark>ready</mark>!');
    expect(div.textContent).toBe('a Ready, ready!');
  });

  it('never interprets the log as HTML', () => {
    const div = document.createElement('div');
    div.append(...highlight('<img src=x onerror=alert(1)>', 'img'));
    expect(div.querySelector('img')).toBeNull();
  });
});

describe('LogText', () => {
  it('appends lines and drops the oldest beyond its limit', () => {
    const text = new LogText(document.createElement('div'), 3);
    text.append(['1', '2']);
    text.append(['3', '4', '5']);
    expect(text.lines).toEqual(['3', '4', '5']);
    expect(text.node.children.length).toBe(3);
    expect(text.toString()).toBe('3\n4\n5\n');
  });

  it('searches, steps through matches and follows new lines', () => {
    const text = new LogText(document.createElement('div'));
    text.append(['start', 'sshd ready', 'other', 'ready too']);
    text.search('ready');
    expect(text.matches).toEqual([1, 3]);
    expect(text.current).toBe(0);
    expect(text.node.querySelectorAll('mark').length).toBe(2);
    expect(text.node.children[1].classList.contains('jp-mod-current')).toBe(
      true
    );
    text.step(1);
    expect(text.current).toBe(1);
    text.step(1);
    expect(text.current).toBe(0);
    text.step(-1);
    expect(text.current).toBe(1);
    text.append(['not', 'ready again']);
    expect(text.matches).toEqual([1, 3, 5]);
    expect(text.node.children[5].querySelector('mark')).not.toBeNull();
    text.search('');
    expect(text.node.querySelectorAll('mark').length).toBe(0);
    expect(text.current).toBe(-1);
  });

  it('clears', () => {
    const text = new LogText(document.createElement('div'));
    text.append(['a']);
    text.clear();
    expect(text.lines).toEqual([]);
    expect(text.node.textContent).toBe('');
  });
});
