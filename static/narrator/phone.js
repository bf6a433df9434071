// A phone at a venue, around app.js (which owns the socket and the actions):
// (1) a tap that starts something (a challenge, an attack, a contested roll)
// says it worked: "Challenge sent to Mara" by its form once the server
// acknowledges it, and the new card scrolls into view and flashes;
// (2) the bar of what waits on her (#waiting-bar, challenges.views.waiting)
// scrolls to its card on a tap;
// (3) alerts: a vibration and (if she turned it on) a short beep when
// something new waits on her and when a Time out is called; the screen kept
// awake while something waits (Screen Wake Lock); each can be turned off in
// "Alerts" (.alert-settings), remembered on this device;
// (4) a link lost for 2 s shows as a banner across the screen (#link-lost);
// (5) installable: registers the service worker (/sw.js) and keeps a copy of
// her page as last seen, which the worker shows when a reload finds no
// network ("Offline: your moves will be sent when the connection returns").
(function () {
  "use strict";
  var LOST_AFTER_MS = 2000; // a link down this long: the banner
  var FLASH_MS = 2000; // narrator.css .just-now
  var STARTED_WAIT_MS = 15000; // the new card of a start expected this long
  var SNAPSHOT_DELAY_MS = 500; // frames come in bursts: one copy after the last
  var PAGES = "narrator-pages"; // templates/narrator/sw.js
  var SHELL = "narrator-shell";
  var OFFLINE_TEXT = "Offline: your moves will be sent when the connection returns.";
  var LOST_TEXT = "Connection lost: reconnecting… Your moves will be sent when the connection returns.";
  var STARTS = { "challenge.open": "Challenge sent to ", "bns.open": "Attack sent to ", "roll.contest": "Roll sent to " };
  var SETTINGS = { sound: "narrator.alert.sound", vibrate: "narrator.alert.vibrate", awake: "narrator.alert.awake" };
  var DEFAULTS = { sound: false, vibrate: true, awake: true };
  var root = document.querySelector("[ws-connect]");
  var isPhone = document.body.classList.contains("phone");
  var offlineCopy = document.documentElement.hasAttribute("data-offline-copy");

  function setting(name) {
    var value = null;
    try { value = localStorage.getItem(SETTINGS[name]); } catch (e) { /* private mode: defaults */ }
    return value === null ? DEFAULTS[name] : value === "1";
  }

  // (1) Starts: the form's words on the ack, the new card on its frame.
  var starts = new Map(); // action id -> {form, words, before: ids of the cards shown, at}
  function cardIds() {
    var ids = new Set();
    document.querySelectorAll("article.card[id]").forEach(function (card) { ids.add(card.id); });
    return ids;
  }
  // Whom a start form names: the checked opponent chip, or the chosen option.
  function opponentName(form) {
    var checked = form.querySelector("input[name=defender]:checked");
    if (checked) return (checked.closest("label") || checked).textContent.trim();
    var select = form.querySelector("select[name=defender], select[name=opponent]");
    if (select && select.selectedIndex >= 0) return select.options[select.selectedIndex].text.trim();
    return "";
  }
  // "Challenge sent to Mara", the name isolated (<bdi>): a name with a
  // right-to-left override reverses nothing after it.
  function sayStarted(form, words, name) {
    var said = form.previousElementSibling;
    if (!said || !said.classList.contains("start-sent")) {
      said = document.createElement("p");
      said.className = "start-sent";
      said.setAttribute("role", "status");
      form.parentNode.insertBefore(said, form);
    }
    said.textContent = words || "";
    if (name) {
      var bdi = document.createElement("bdi");
      bdi.textContent = name;
      said.appendChild(bdi);
    }
    said.hidden = !words;
  }
  function flash(card) {
    card.classList.remove("just-now");
    void card.offsetWidth; // restart the animation
    card.classList.add("just-now");
    setTimeout(function () { card.classList.remove("just-now"); }, FLASH_MS);
  }
  document.addEventListener("htmx:wsConfigSend", function (evt) {
    var params = evt.detail.parameters;
    var words = STARTS[params.action];
    var form = evt.detail.elt;
    if (!words || !form || !form.querySelector) return;
    starts.set(params.id, { form: form, words: words, name: opponentName(form), before: cardIds(), at: Date.now() });
    sayStarted(form, "");
  });
  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var message = evt.detail.message;
    if (typeof message !== "string" || message.charAt(0) !== "{") return;
    var data;
    try { data = JSON.parse(message); } catch (e) { return; }
    var start = data.id && starts.get(data.id);
    if (!start) return;
    if (data.type === "ack") {
      sayStarted(start.form, start.name ? start.words : start.words.trim(), start.name);
      start.acked = true;
    } else if (data.type === "error") {
      starts.delete(data.id);
    }
  });
  function showNewCards() {
    var now = Date.now();
    starts.forEach(function (start, id) {
      if (now - start.at > STARTED_WAIT_MS) return starts.delete(id);
      var fresh = Array.prototype.filter.call(document.querySelectorAll("article.card[id]"), function (card) {
        return !start.before.has(card.id);
      });
      if (!fresh.length) return;
      starts.delete(id);
      fresh[0].scrollIntoView({ block: "center" });
      flash(fresh[0]);
    });
  }

  // (2) The bar: a tap goes to the card it names.
  document.addEventListener("click", function (evt) {
    var go = evt.target.closest && evt.target.closest("#waiting-bar .waiting-go");
    if (!go) return;
    var card = document.querySelector(go.dataset.target);
    if (!card) return;
    evt.preventDefault();
    card.scrollIntoView({ block: "start" });
    flash(card);
  });

  // (3) Alerts.
  var audio = null;
  function beep() {
    var Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    try {
      audio = audio || new Context();
      var tone = audio.createOscillator();
      var gain = audio.createGain();
      tone.frequency.value = 880;
      gain.gain.setValueAtTime(0.2, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
      tone.connect(gain).connect(audio.destination);
      tone.start();
      tone.stop(audio.currentTime + 0.25);
    } catch (e) { /* no sound on this browser */ }
  }
  // Browsers start sound only after a tap: the first one anywhere unlocks it.
  document.addEventListener("pointerdown", function () {
    if (setting("sound") && audio === null) {
      var Context = window.AudioContext || window.webkitAudioContext;
      if (Context) audio = new Context();
    }
  }, { once: true });
  function signal(pattern) {
    if (setting("vibrate") && navigator.vibrate) {
      try { navigator.vibrate(pattern); } catch (e) { /* not allowed yet */ }
    }
    if (setting("sound")) beep();
  }
  function waits() {
    var bar = document.getElementById("waiting-bar");
    var listed = bar ? (bar.dataset.waits || "").split(" ") : [];
    return new Set(listed.filter(Boolean));
  }
  function timeOut() { return !!document.querySelector("#time-out.active"); }
  var waited = waits();
  var stopped = timeOut();
  var lock = null;
  var locking = false;
  function keepAwake() {
    var wanted = setting("awake") && waited.size > 0 && document.visibilityState === "visible";
    if (wanted && !lock && !locking && navigator.wakeLock) {
      locking = true;
      navigator.wakeLock.request("screen").then(function (held) {
        locking = false;
        lock = held;
        if (held.addEventListener) held.addEventListener("release", function () { if (lock === held) lock = null; });
        keepAwake(); // wanted no longer: let it go
      }, function () { locking = false; });
    } else if (!wanted && lock) {
      var held = lock;
      lock = null;
      held.release().catch(function () { /* already released */ });
    }
  }
  function afterFrame() {
    var now = waits();
    var fresh = false;
    now.forEach(function (step) { if (!waited.has(step)) fresh = true; });
    waited = now;
    var stop = timeOut();
    if (!isPhone) { /* a narrator's tablet calls the Time out itself */ }
    else if (stop && !stopped) signal([400, 150, 400]);
    else if (fresh) signal([200, 100, 200]);
    stopped = stop;
    keepAwake();
  }
  document.addEventListener("visibilitychange", keepAwake); // a lock ends when the screen is hidden
  keepAwake();

  // Alert settings: each toggle remembered on this device.
  document.querySelectorAll(".alert-settings input[data-setting]").forEach(function (box) {
    box.checked = setting(box.dataset.setting);
    box.addEventListener("change", function () {
      try { localStorage.setItem(SETTINGS[box.dataset.setting], box.checked ? "1" : "0"); } catch (e) { /* this page only */ }
      if (box.dataset.setting === "sound" && box.checked) beep(); // a tap: sound may start; she hears it
      keepAwake();
    });
  });

  // (4) The link lost: #connection (app.js) not "Connected" for LOST_AFTER_MS,
  // and no refusal (4xxx, said there) is final.
  var banner = null;
  var refused = false;
  var lostTimer = null;
  function showLost(on) {
    if (!banner) {
      banner = document.createElement("p");
      banner.id = "link-lost";
      banner.setAttribute("role", "alert");
      document.body.insertBefore(banner, document.body.firstChild);
    }
    banner.textContent = offlineCopy || !navigator.onLine ? OFFLINE_TEXT : LOST_TEXT;
    banner.hidden = !on;
  }
  function watchLink() {
    var status = document.getElementById("connection");
    var up = status && status.classList.contains("ok");
    if (up || refused) {
      clearTimeout(lostTimer);
      lostTimer = null;
      if (banner) banner.hidden = true;
      if (up) offlineCopy = false;
    } else if (!lostTimer && (!banner || banner.hidden)) {
      lostTimer = setTimeout(function () { lostTimer = null; showLost(true); }, offlineCopy ? 0 : LOST_AFTER_MS);
    }
  }
  if (root) {
    var status = document.getElementById("connection");
    if (status) new MutationObserver(watchLink).observe(status, { attributes: true, childList: true, characterData: true, subtree: true });
    document.addEventListener("htmx:wsClose", function (evt) {
      var code = (evt.detail.event || {}).code;
      refused = code >= 4000 && code < 5000 && code !== 4429; // app.js says why and what to do
      watchLink();
    });
    document.addEventListener("htmx:wsOpen", function () { refused = false; });
    window.addEventListener("offline", function () { if (banner && !banner.hidden) showLost(true); });
    watchLink();
  }

  // (5) Installable, and her page kept as last seen for a reload offline.
  // The files this page was drawn with, kept for a reload offline: the worker
  // keeps only what it fetched itself, and it did not draw this first page.
  function keepShell() {
    var files = [];
    document.querySelectorAll("script[src], link[rel=stylesheet], link[rel=icon], link[rel=apple-touch-icon]").forEach(function (el) {
      files.push(el.src || el.href);
    });
    return caches.open(SHELL).then(function (cache) { return cache.addAll(files); });
  }
  if ("serviceWorker" in navigator && window.caches) {
    navigator.serviceWorker.register("/sw.js").then(function () {
      return navigator.serviceWorker.ready;
    }).then(function () {
      if (isPhone && !offlineCopy) return keepShell();
    }).catch(function () { /* not https, or storage refused: no offline copy */ });
  }
  var loggedIn = !!document.querySelector("form[action$='/logout/']");
  if (!loggedIn && window.caches) caches.delete(PAGES); // nobody's page stays on a shared phone
  document.addEventListener("submit", function (evt) {
    if (evt.target.matches && evt.target.matches("form[action$='/logout/']") && !evt.defaultPrevented && window.caches) {
      caches.delete(PAGES);
    }
  });
  var snapshotTimer = null;
  function snapshot() {
    if (!window.caches || !isPhone || !loggedIn || offlineCopy) return;
    var page = document.documentElement.cloneNode(true);
    page.setAttribute("data-offline-copy", "");
    ["#link-lost", "#notice", ".start-sent"].forEach(function (selector) {
      page.querySelectorAll(selector).forEach(function (el) { el.remove(); });
    });
    var status = page.querySelector("#connection");
    if (status) {
      status.textContent = "Connecting…";
      status.classList.remove("ok");
    }
    page.querySelectorAll(".just-now").forEach(function (el) { el.classList.remove("just-now"); });
    var html = "<!doctype html>\n" + page.outerHTML;
    var path = location.pathname;
    caches.open(PAGES).then(function (cache) {
      return cache.put(path, new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } }));
    }).catch(function () { /* storage full or forbidden: no offline copy */ });
  }
  function snapshotSoon() {
    clearTimeout(snapshotTimer);
    snapshotTimer = setTimeout(snapshot, SNAPSHOT_DELAY_MS);
  }

  document.addEventListener("htmx:wsAfterMessage", function (evt) {
    var message = evt.detail.message;
    if (typeof message === "string" && message.charAt(0) === "{") return; // an ack, pong or error
    afterFrame();
    showNewCards();
    snapshotSoon();
  });
})();
