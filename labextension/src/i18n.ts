/**
 * The translation bundle of the extension ("jupyter_cluster"). Until the plugin
 * activates (and in tests) it is JupyterLab's null translator, which returns the
 * English text with its %1, %2 … filled in.
 */

import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';

export const DOMAIN = 'jupyter_cluster';

let trans: TranslationBundle = nullTranslator.load(DOMAIN);

/** The current bundle: `const trans = getTrans(); trans.__('Launch')`. */
export function getTrans(): TranslationBundle {
  return trans;
}

/** Use `translator` from now on (the plugin calls this when it activates). */
export function setTranslator(translator: ITranslator): void {
  trans = translator.load(DOMAIN);
}
