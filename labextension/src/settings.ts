/**
 * The user's settings of the extension (schema/plugin.json), read over their
 * defaults.
 */

import { ILaunchRequest } from './api';

export interface IClusterSettings {
  /** Values the launch dialog starts with (over the server's defaults). */
  launchDefaults: Partial<ILaunchRequest>;
  /** Whether "start a kernel and open a notebook" starts ticked. */
  openNotebookOnLaunch: boolean;
  /** Whether terminating asks first. */
  confirmTerminate: boolean;
  /** Lines of the end of a log that a log tab loads. */
  logTail: number;
  /** Most lines a log tab keeps. */
  logMaxLines: number;
}

export const DEFAULT_SETTINGS: IClusterSettings = {
  launchDefaults: {},
  openNotebookOnLaunch: true,
  confirmTerminate: true,
  logTail: 1000,
  logMaxLines: 10000
};

/** The settings from a composite (null: all defaults). */
export function readSettings(
  composite: Partial<IClusterSettings> | null | undefined
): IClusterSettings {
  return { ...DEFAULT_SETTINGS, ...(composite ?? {}) };
}
