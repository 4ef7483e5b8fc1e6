/*
 * Chromium fails the requests it has in flight when this host's network interfaces
 * change (net::ERR_NETWORK_CHANGED), and Docker adds and removes some for every
 * session: the test's own and those of tests running beside it. JupyterLab then
 * asks whether the server is gone ("Server unavailable or unreachable" under
 * JupyterHub, "Server Connection Error" otherwise), and the dialog covers the page.
 * A person whose server still answers dismisses it; the browser scripts
 * (lab_e2e.js, lab_runner.js) do the same, and only then: if no request failed so,
 * or the server does not answer, the step fails with why.
 */

'use strict';

const CHANGED = 'ERR_NETWORK_CHANGED';
const DIALOG =
  'dialog.jp-Dialog[aria-label^="Server unavailable or unreachable"], ' +
  'dialog.jp-Dialog[aria-label^="Server Connection Error"]';

/*
 * Watch `page` for requests failed by a network change (counted in
 * results.networkChanged.failed) and dismiss the dialog they cause while
 * `labUrl`'s api/status answers 200 (counted in results.networkChanged.dismissed).
 */
async function dismissAfterNetworkChanges(page, labUrl, results) {
  const counts = { failed: 0, dismissed: 0 };
  results.networkChanged = counts;
  page.on('requestfailed', request => {
    if ((request.failure()?.errorText || '').includes(CHANGED)) {
      counts.failed += 1;
    }
  });
  page.on('console', message => {
    if (message.type() === 'error' && message.text().includes(CHANGED)) {
      counts.failed += 1;
    }
  });
  await page.addLocatorHandler(page.locator(DIALOG), async dialog => {
    const label = await dialog.getAttribute('aria-label');
    const status = await page.request
      .get(new URL('api/status', labUrl).toString())
      .then(
        response => response.status(),
        error => String(error)
      );
    if (counts.failed === 0 || status !== 200) {
      throw new Error(
        `JupyterLab says the server is unreachable (${label}); requests failed by a ` +
          `network change: ${counts.failed}; ${labUrl}api/status: ${status}`
      );
    }
    counts.dismissed += 1;
    await dialog.getByRole('button', { name: 'Dismiss' }).click();
  });
}

module.exports = { dismissAfterNetworkChanges };
