import {
  formatAge,
  formatCpu,
  formatPercent,
  formatSize,
  formatSizeShort,
  parseCpu,
  parseSize
} from '../units';

describe('sizes', () => {
  it('reads sizes as Docker does (powers of 1024)', () => {
    expect(parseSize('512m')).toBe(512 * 1024 ** 2);
    expect(parseSize('2g')).toBe(2 * 1024 ** 3);
    expect(parseSize('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(parseSize(' 64 MiB ')).toBe(64 * 1024 ** 2);
    expect(parseSize('1024')).toBe(1024);
    expect(parseSize(2048)).toBe(2048);
  });

  it('refuses what is not a size', () => {
    for (const bad of ['', 'big', '-1g', '1x', '1.g', 'g']) {
      expect(parseSize(bad)).toBeNull();
    }
    expect(parseSize(-5)).toBeNull();
    expect(parseSize(Infinity)).toBeNull();
  });

  it('writes sizes the way they are read', () => {
    expect(formatSize(512 * 1024 ** 2)).toBe('512m');
    expect(formatSize(2 * 1024 ** 3)).toBe('2g');
    expect(formatSize(1.5 * 1024 ** 3)).toBe('1.5g');
    expect(formatSize(25276059648)).toBe('23.54g');
    expect(formatSize(1)).toBe('1');
    for (const text of ['6m', '64m', '3g', '16g', '1t']) {
      expect(formatSize(parseSize(text)!)).toBe(text);
    }
  });
});

describe('CPUs', () => {
  it('reads counts and millicores', () => {
    expect(parseCpu('0.5')).toBe(0.5);
    expect(parseCpu('500m')).toBe(0.5);
    expect(parseCpu(2)).toBe(2);
    expect(parseCpu('.25')).toBe(0.25);
  });

  it('refuses zero, negatives, text and steps finer than 0.001', () => {
    for (const bad of ['0', '-1', 'two', '', '0.0001', '1e3']) {
      expect(parseCpu(bad)).toBeNull();
    }
    expect(parseCpu(NaN)).toBeNull();
  });

  it('writes counts without trailing zeros', () => {
    expect(formatCpu(1.5)).toBe('1.5');
    expect(formatCpu(2)).toBe('2');
    expect(formatCpu(0.125)).toBe('0.125');
  });
});

describe('ages', () => {
  const now = 1_000_000 * 1000;
  it('says how long ago', () => {
    expect(formatAge(1_000_000 - 12, now)).toBe('12s');
    expect(formatAge(1_000_000 - 300, now)).toBe('5m');
    expect(formatAge(1_000_000 - 3 * 3600 - 300, now)).toBe('3h 5m');
    expect(formatAge(1_000_000 - 2 * 86400, now)).toBe('2d');
    expect(formatAge(1_000_000 + 5, now)).toBe('0s');
  });
});

describe('usage figures', () => {
  it('rounds sizes for reading at a glance', () => {
    expect(formatSizeShort(120 * 1024 ** 2 + 12345)).toBe('120m');
    expect(formatSizeShort(512 * 1024 ** 2)).toBe('512m');
    expect(formatSizeShort(1.53 * 1024 ** 3)).toBe('1.5g');
    expect(formatSizeShort(2 * 1024 ** 3)).toBe('2g');
    expect(formatSizeShort(300 * 1024)).toBe('300k');
    expect(formatSizeShort(512)).toBe('512');
    expect(formatSizeShort(0)).toBe('0');
  });

  it('writes percentages', () => {
    expect(formatPercent(47.2)).toBe('47%');
    expect(formatPercent(2.54)).toBe('2.5%');
    expect(formatPercent(0)).toBe('0%');
    expect(formatPercent(199.6)).toBe('200%');
  });
});
