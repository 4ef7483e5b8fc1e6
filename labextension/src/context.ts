/**
 * The context the commands (./commands) hand to what they run: ./pickers, and
 * ./actions with ./terminals (loaded when a command first runs). It lives here,
 * not in ./actions, so that no module imports ./actions for a type: a module
 * that ./actions loads importing it back would be an import cycle.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { WidgetTracker } from '@jupyterlab/apputils';

import type { LogPanel } from './logs';
import type { SessionsModel } from './sessions';
import type { IClusterSettings } from './settings';

/** What the actions share. */
export interface IContext {
  app: JupyterFrontEnd;
  model: SessionsModel;
  settings: () => IClusterSettings;
  logs: WidgetTracker<LogPanel>;
  /** Show the sidebar. */
  showSidebar: () => void;
}
