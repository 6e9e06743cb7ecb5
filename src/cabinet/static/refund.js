// The refund link page's only script: while the refund moves (awaiting payment, sent), it asks
// /refund/{token}/state and reloads the page when the status changed. Loaded from 'self' under
// the CSP; it evaluates nothing. Without it the page refreshes itself (a <noscript> meta refresh).
(function () {
  'use strict';
  var POLL_MS = 4000;
  var main = document.getElementById('refund');
  if (!main || !main.dataset.stateUrl) return;
  var shown = main.dataset.status;
  function poll() {
    fetch(main.dataset.stateUrl, { cache: 'no-store', credentials: 'omit' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) {
        if (s && s.status !== shown) { window.location.reload(); return; }
        setTimeout(poll, POLL_MS);
      }, function () { setTimeout(poll, POLL_MS * 2); });
  }
  setTimeout(poll, POLL_MS);
})();
