/*
 * The browser runs in a network namespace of its own (tests/support/browser_network.py),
 * so Docker's interfaces, added and removed for every session, never reach it: no
 * request may fail with net::ERR_NETWORK_CHANGED, and JupyterLab's "server
 * unreachable" dialog ("Server unavailable or unreachable" under JupyterHub,
 * "Server Connection Error" otherwise) means the server really did not answer.
 * The browser scripts (lab_e2e.js, lab_runner.js) watch for both: the dialog fails
 * the step at once, saying so, and the requests failed by a network change are
 * counted in results.networkChanged, which the Python tests require to be 0.
 */

'use strict';

const CHANGED = 'ERR_NETWORK_CHANGED';
const DIALOG =
  'dialog.jp-Dialog[aria-label^="Server unavailable or unreachable"], ' +
  'dialog.jp-Dialog[aria-label^="Server Connection Error"]';

/*
 * Count `page`'s requests failed by a network change in results.networkChanged and
 * fail whatever the page is doing when the "server unreachable" dialog shows.
 */
async function watchNetwork(page, results) {
  results.networkChanged = 0;
  page.on('requestfailed', request => {
    if ((request.failure()?.errorText || '').includes(CHANGED)) {
      results.networkChanged += 1;
    }
  });
  await page.addLocatorHandler(page.locator(DIALOG), async dialog => {
    const label = await dialog.getAttribute('aria-label');
    throw new Error(
      `JupyterLab says the server is unreachable (${label}); requests failed by a ` +
        `network change: ${results.networkChanged}`
    );
  });
}

module.exports = { watchNetwork };
