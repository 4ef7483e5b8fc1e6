/**
 * The launch dialog's "Environment variables" field, without any UI:
 * `KEY=VALUE`, one a line. Used by ./form (values, checks and the request);
 * values are never quoted in messages (they may be secrets).
 */

import { getTrans } from './i18n';
import { pairLines, pairsText } from './pairlines';

/**
 * The field's text for variables (`{KEY: VALUE}`, e.g. a profile's): `KEY=VALUE`
 * lines; '' for anything else. Called by ./form's `initialValues`.
 */
export const envText = pairsText;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The variables of the environment field (`KEY=VALUE`, one a line, blank lines
 * skipped), or what is wrong with it; never quotes a value (it may be a secret).
 * Names the server reserves (`BACKENDAI_*`, `PATH`…) are left to its 400.
 */
export function parseEnv(value: string): Record<string, string> | string {
  const trans = getTrans();
  const env: Record<string, string> = Object.create(null);
  for (const { line, name, value: pairValue } of pairLines(value)) {
    if (name === null) {
      return trans.__('Line %1 is not KEY=VALUE.', line);
    }
    if (!ENV_NAME.test(name)) {
      return trans.__(
        "Line %1: %2 is not a variable name; use letters, digits and '_', not starting with a digit.",
        line,
        JSON.stringify(name.slice(0, 60))
      );
    }
    if (name in env) {
      return trans.__('%1 is given twice.', name);
    }
    env[name] = pairValue;
  }
  return env;
}

/** The `env` of `POST sessions`: the variables, or null for none (or wrong). */
export function envRequest(value: string): Record<string, string> | null {
  const env = parseEnv(value);
  if (typeof env === 'string' || !Object.keys(env).length) {
    return null;
  }
  return { ...env };
}
