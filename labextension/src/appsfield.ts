/**
 * The launch dialog's "Apps" field, without any UI: web apps in main1 declared
 * at launch as `NAME=PORT`, one a line. Mirrors the rules of
 * `jupyter_cluster/core/apps.py` (names, ports 1 to 65535, each name and port
 * once, at most 16) so that mistakes show, per line, before anything is sent.
 * Used by ./form (values, checks and the request) and, through it, ./formview.
 */

import { getTrans } from './i18n';
import { pairLines, pairsText } from './pairlines';

/** An app's name: letters, digits, '.', '_' and '-', at most 40. */
export const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/;

/** Declared apps of one session at most. */
export const MAX_APPS = 16;

/**
 * The field's text for declared apps (`{name: port}`, e.g. a profile's or the
 * server's default): `NAME=PORT` lines; '' for anything else. Called by
 * ./form's `initialValues`.
 */
export const appsText = pairsText;

/** A port typed as text (1 to 65535), or what is wrong with it. */
function parsePort(text: string, line: number): number | string {
  const trans = getTrans();
  if (!/^[0-9]+$/.test(text)) {
    return trans.__(
      'Line %1: %2 is not a port number; give a whole number from 1 to 65535.',
      line,
      JSON.stringify(text.slice(0, 20))
    );
  }
  const port = parseInt(text, 10);
  if (text.length > 5 || port < 1 || port > 65535) {
    return trans.__(
      'Line %1: port %2 is out of range; use 1 to 65535.',
      line,
      text.slice(0, 20)
    );
  }
  return port;
}

/**
 * The apps of the field (`NAME=PORT`, one a line, blank lines skipped, spaces
 * around the name and the port ignored) in the order given, or what is wrong
 * with the first wrong line. Called by ./form's `validate` and `toRequest`.
 */
export function parseApps(value: string): Record<string, number> | string {
  const trans = getTrans();
  const apps: Record<string, number> = Object.create(null);
  const ports = new Map<number, string>();
  for (const { line, name: given, value: portText } of pairLines(value)) {
    if (given === null) {
      return trans.__(
        'Line %1 is not NAME=PORT; write e.g. tensorboard=6006.',
        line
      );
    }
    const name = given.trim();
    if (!APP_NAME.test(name)) {
      return trans.__(
        "Line %1: %2 is not an app name; use letters, digits, '.', '_' and '-' (at most 40, starting with a letter or digit).",
        line,
        JSON.stringify(name.slice(0, 60))
      );
    }
    const port = parsePort(portText.trim(), line);
    if (typeof port === 'string') {
      return port;
    }
    if (name in apps) {
      return trans.__('Line %1: %2 is declared twice.', line, name);
    }
    if (ports.has(port)) {
      return trans.__(
        'Line %1: port %2 is already used by %3.',
        line,
        port,
        ports.get(port)!
      );
    }
    if (ports.size >= MAX_APPS) {
      return trans.__('Line %1: at most %2 apps per session.', line, MAX_APPS);
    }
    apps[name] = port;
    ports.set(port, name);
  }
  return apps;
}

/**
 * The `apps` of `POST sessions` for the field's text: `{apps: {name: port}}`,
 * or nothing (`{}`) when none are declared or the text is wrong, so a server
 * without the field is never sent it. Called by ./form's `toRequest`.
 */
export function appsRequest(value: string): {
  apps?: Record<string, number>;
} {
  const apps = parseApps(value);
  if (typeof apps === 'string' || !Object.keys(apps).length) {
    return {};
  }
  return { apps: { ...apps } };
}
