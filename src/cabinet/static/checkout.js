// The checkout page's only script: copy buttons, the countdown, and the live status (polls
// /pay/{id}/status; when it changes, the page's content is fetched again and swapped in).
// Loaded from 'self' under the CSP; it evaluates nothing. Without it the page refreshes itself.
(function () {
  'use strict';
  var POLL_MS = 3000;
  var OPEN = ['pending', 'seen', 'aml_check', 'underpaid'];
  var main = document.getElementById('checkout');
  if (!main || !main.dataset.statusUrl) return;

  function initCopy() {
    main.querySelectorAll('button[data-copy]').forEach(function (button) {
      button.hidden = false;
      if (button.dataset.bound) return;
      button.dataset.bound = '1';
      button.addEventListener('click', function () {
        var text = button.getAttribute('data-copy');
        var done = function () {
          // The words come with the page, in its language.
          button.textContent = button.dataset.done || 'Copied';
          button.setAttribute('data-copied', '');
          setTimeout(function () { button.textContent = button.dataset.label || 'Copy'; button.removeAttribute('data-copied'); }, 1500);
        };
        if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, function () { select(button); });
        else select(button);
      });
    });
  }

  // Without the clipboard API (plain http off localhost), select the value so the customer can copy it.
  function select(button) {
    var code = button.parentElement && button.parentElement.querySelector('.copy-value');
    if (!code) return;
    var range = document.createRange();
    range.selectNodeContents(code);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  function pad(n) { return n < 10 ? '0' + n : String(n); }

  function tick() {
    var el = document.getElementById('countdown');
    if (!el) return;
    var s = Math.max(0, Math.floor((Date.parse(el.getAttribute('datetime')) - Date.now()) / 1000));
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    el.textContent = (h > 0 ? h + ':' + pad(m) : String(m)) + ':' + pad(s % 60);
    if (s === 0 && !tick.expiredAsked) {
      tick.expiredAsked = true;
      poll();
    }
  }

  function announce(text) {
    var live = document.getElementById('announce');
    if (live) live.textContent = text;
  }

  // The page's content for the new status, from the same server-rendered page.
  function refresh() {
    // The same URL, ?lang= and all: the new content is in the page's language.
    return fetch(location.pathname + location.search, { headers: { accept: 'text/html' }, credentials: 'omit' }).then(function (r) {
      if (!r.ok) throw new Error('status ' + r.status);
      return r.text();
    }).then(function (text) {
      var next = new DOMParser().parseFromString(text, 'text/html').getElementById('checkout');
      if (!next) return;
      var live = document.getElementById('announce');
      Array.prototype.slice.call(main.children).forEach(function (c) { if (c !== live) main.removeChild(c); });
      Array.prototype.slice.call(next.children).forEach(function (c) { if (c.id !== 'announce') main.insertBefore(document.adoptNode(c), live); });
      main.dataset.version = next.dataset.version;
      main.dataset.status = next.dataset.status;
      document.title = next.ownerDocument.title;
      initCopy();
      tick();
      var state = document.getElementById('state');
      if (state) announce(state.textContent);
      if (main.dataset.status === 'paid') goBack();
    });
  }

  // Paid while the customer watched: back to the merchant after a moment (the button stays).
  function goBack() {
    var link = document.getElementById('return');
    if (!link) return;
    setTimeout(function () { location.assign(link.href); }, 2500);
  }

  var timer;
  function schedule(ms) {
    clearTimeout(timer);
    if (OPEN.indexOf(main.dataset.status) >= 0) timer = setTimeout(poll, ms);
  }

  function poll() {
    fetch(main.dataset.statusUrl, { headers: { accept: 'application/json' }, credentials: 'omit' }).then(function (r) {
      if (r.status === 429) return { wait: 1000 * (Number(r.headers.get('retry-after')) || 10) };
      return r.ok ? r.json() : { wait: POLL_MS * 2 };
    }).then(function (s) {
      if (s.wait) return schedule(s.wait);
      if (s.version !== main.dataset.version) return refresh().then(function () { schedule(POLL_MS); });
      schedule(POLL_MS);
    }).catch(function () { schedule(POLL_MS * 2); });
  }

  initCopy();
  tick();
  setInterval(tick, 1000);
  schedule(POLL_MS);
})();
