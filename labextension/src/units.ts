/**
 * Sizes and CPU amounts, read and written the way the server does
 * (`jupyter_cluster/core/units.py`): `512m` is 512 MiB, `2g` is 2 GiB (powers of
 * 1024, as Docker), `500m` CPUs is 0.5.
 */

const UNITS: { [unit: string]: number } = {
  '': 1,
  b: 1,
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
  t: 1024 ** 4
};

const SIZE_RE = /^\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?\s*$/i;

/**
 * The number of bytes of a size such as `512m`, `2g` or `1.5G`, or `null` when
 * the text is not a size.
 */
export function parseSize(value: string | number): number | null {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? Math.floor(value) : null;
  }
  const match = SIZE_RE.exec(value);
  if (!match) {
    return null;
  }
  return Math.floor(parseFloat(match[1]) * UNITS[match[2].toLowerCase()]);
}

/**
 * Bytes as a short size (`512m`, `2g`, `23.54g`), the form {@link parseSize} reads.
 */
export function formatSize(bytes: number): string {
  for (const unit of ['t', 'g', 'm', 'k']) {
    const factor = UNITS[unit];
    if (bytes >= factor) {
      if (bytes % factor === 0) {
        return `${bytes / factor}${unit}`;
      }
      return `${trimZeros((bytes / factor).toFixed(2))}${unit}`;
    }
  }
  return String(Math.max(0, Math.floor(bytes)));
}

/**
 * Bytes as a rounded size for reading at a glance: `120m`, `1.5g`, `980k`
 * (one decimal below 10 units, whole numbers above).
 */
export function formatSizeShort(bytes: number): string {
  for (const unit of ['t', 'g', 'm', 'k']) {
    const value = bytes / UNITS[unit];
    if (value >= 1) {
      return `${value < 10 ? trimZeros(value.toFixed(1)) : Math.round(value)}${unit}`;
    }
  }
  return String(Math.max(0, Math.round(bytes)));
}

/** A percentage for reading at a glance: `47%`, `2.5%`, `0%`. */
export function formatPercent(value: number): string {
  const v = Math.max(0, value);
  return `${v < 10 ? trimZeros(v.toFixed(1)) : Math.round(v)}%`;
}

/**
 * A CPU count from `0.5`, `2` or `1500m` (millicores), or `null` when the text
 * is not a positive CPU count in steps of 0.001.
 */
export function parseCpu(value: string | number): number | null {
  let cpus: number;
  if (typeof value === 'number') {
    cpus = value;
  } else {
    const text = value.trim().toLowerCase();
    if (!/^(\d+(\.\d*)?|\.\d+)m?$/.test(text)) {
      return null;
    }
    cpus = text.endsWith('m')
      ? parseFloat(text.slice(0, -1)) / 1000
      : parseFloat(text);
  }
  if (!Number.isFinite(cpus) || cpus <= 0) {
    return null;
  }
  if (Math.abs(Math.round(cpus * 1000) - cpus * 1000) > 1e-6) {
    return null;
  }
  return cpus;
}

/**
 * A CPU count for people: `0.5`, `2`, `1.25` (no trailing zeros).
 */
export function formatCpu(cpus: number): string {
  return trimZeros(cpus.toFixed(3));
}

/**
 * How long ago `seconds` (a UNIX time) was, from `now` (milliseconds): `12s`,
 * `5m`, `3h 5m`, `2d 4h`.
 */
export function formatAge(seconds: number, now: number = Date.now()): string {
  return formatSpan(now / 1000 - seconds);
}

/** Time left until ``seconds`` (epoch), e.g. "4m" (0s once past). */
export function formatLeft(seconds: number, now: number = Date.now()): string {
  return formatSpan(seconds - now / 1000);
}

function formatSpan(span: number): string {
  const total = Math.max(0, Math.floor(span));
  if (total < 60) {
    return `${total}s`;
  }
  const minutes = Math.floor(total / 60);
  if (minutes < 60) {
    return `${minutes}m`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return minutes % 60 ? `${hours}h ${minutes % 60}m` : `${hours}h`;
  }
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days}d ${hours % 24}h` : `${days}d`;
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
