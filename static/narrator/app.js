// Narrator's client glue around htmx's ws extension. The server owns all state;
// this script only (1) gives every action an id and keeps it until the server
// acknowledges it, resending unacknowledged actions after a reconnect (the
// server answers a repeat "already done"), (2) shows errors, (3) reconnects
// on every close code except the server's refusals (4xxx), with a jittered
// backoff capped at a few seconds, (4) runs an app-level heartbeat that echoes
// the view's stamp, and asks for a full resync when one is missed or the
// screen wakes, (5) ticks the "waiting for" clocks on the dashboard.
(function () {
  "use strict";
  var HEARTBEAT_MS = window.NARRATOR_HEARTBEAT_MS || 10000; // tests shorten it
  var BACKOFF_CAP_MS = 4000; // reconnect delays: full jitter, never longer than this
  var HTMX_RECONNECTS = [1006, 1011, 1012, 1013]; // codes htmx's ws extension retries itself
  var pending = new Map(); // id -> JSON body not yet acknowledged
  var sentFrom = new Map(); // id -> the form[data-reset-on-ack] it came from
  var socket = null; // htmx's socket wrapper (public interface)
  var current = null; // the browser WebSocket htmx opened last
  var open = false;
  var stamp = ""; // the server's stamp of the last view frame ("<!--v:STAMP-->")
  var heard = Date.now(); // last frame of any kind from the server
  var pinged = 0; // when the last ping (or sync) went out
  var retries = 0; // reconnects we started since the last open

  // htmx's default backoff grows to 64 s; a phone at a game should be back in seconds.
  htmx.config.wsReconnectDelay = function (retryCount) {
    return Math.random() * Math.min(BACKOFF_CAP_MS, 500 * Math.pow(2, retryCount));
  };
  // Know which socket is current, so the close of one we replaced is not a reason to reconnect.
  var createWebSocket = htmx.createWebSocket || function (url) { return new WebSocket(url); };
  // A reconnect names the stamp of what the screen shows (?v=STAMP): when nothing
  // changed meanwhile the server answers "pong" instead of re-rendering the view.
  htmx.createWebSocket = function (url) {
    var base = url.split("?")[0];
    current = createWebSocket(stamp ? base + "?v=" + encodeURIComponent(stamp) : base);
    return current;
  };

  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }
  function $(id) { return document.getElementById(id); }
  function setConnection(text, ok) {
    var el = $("connection");
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("ok", !!ok);
  }
  function notify(text) {
    var el = $("notice");
    if (!el) return;
    el.textContent = text;
    el.hidden = !text;
    el.dataset.duringTimeOut = document.querySelector(".time-out.active") ? "1" : "";
    clearTimeout(notify.timer);
    if (text) notify.timer = setTimeout(function () { el.hidden = true; }, 6000);
  }
  function send(payload) {
    if (socket && open) socket.send(JSON.stringify(payload));
  }
  function reconnect() {
    open = false;
    setConnection("Reconnecting…", false);
    if (socket) socket.reconnect(); // closes the dead socket (ignored below), opens a new one
  }

  document.addEventListener("htmx:wsConfigSend", function (evt) {
    var params = evt.detail.parameters;
    var trigger = evt.detail.triggeringEvent;
    var submitter = trigger && trigger.submitter;
    if (submitter && submitter.name) params[submitter.name] = submitter.value;
    params.id = newId();
    evt.detail.headers = null; // htmx's HEADERS block is not used by the server
    pending.set(params.id, JSON.stringify(params));
    var form = evt.detail.elt || (trigger && trigger.target);
    if (form && form.matches && form.matches("form[data-reset-on-ack]")) sentFrom.set(params.id, form);
    if (form && form.querySelectorAll) {
      form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    }
  });

  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var message = evt.detail.message;
    heard = Date.now(); // any frame proves the socket alive
    if (typeof message !== "string") return;
    if (message.lastIndexOf("<!--v:", 0) === 0) {
      stamp = message.slice(6, message.indexOf("-->")); // htmx ignores the comment itself
      return;
    }
    if (message.charAt(0) !== "{") return; // a view fragment
    evt.preventDefault();
    var data;
    try { data = JSON.parse(message); } catch (e) { return; }
    if (data.type === "ack") {
      pending.delete(data.id);
      // A form no view re-renders (the phone's "Challenge someone") starts blank once done.
      if (sentFrom.has(data.id)) sentFrom.get(data.id).reset();
      sentFrom.delete(data.id);
      // Forms the server never re-renders (the narrator's) are ready for the next one.
      document.querySelectorAll("form[data-reusable] button[disabled]").forEach(function (b) {
        b.disabled = false;
      });
    } else if (data.type === "error") {
      pending.delete(data.id);
      sentFrom.delete(data.id);
      notify(data.message);
      document.querySelectorAll("form[ws-send] button[disabled]").forEach(function (b) {
        b.disabled = false;
      });
    }
  });

  // A refusal raised during a Time out is stale once the narrator resumes play.
  document.addEventListener("htmx:wsAfterMessage", function () {
    var el = $("notice");
    if (el && !el.hidden && el.dataset.duringTimeOut && !document.querySelector(".time-out.active")) {
      notify("");
    }
  });

  document.addEventListener("htmx:wsOpen", function (evt) {
    socket = evt.detail.socketWrapper;
    open = true;
    retries = 0;
    heard = Date.now();
    pinged = 0;
    setConnection("Connected", true);
    // The server sends the full view on connect (or "pong" when ?v= is current);
    // replay what it never acknowledged
    // (same ids: the server answers a repeat "already_done" and applies nothing twice).
    pending.forEach(function (body) { socket.send(body); });
  });

  document.addEventListener("htmx:wsClose", function (evt) {
    var event = evt.detail.event || {};
    if (current && event.target && event.target !== current) return; // one we replaced
    open = false;
    socket = evt.detail.socketWrapper || socket;
    var code = event.code;
    if (code >= 4000 && code < 5000) {
      // 4401 not logged in, 4403 not allowed, 4404 nothing to play: retrying cannot help.
      setConnection("Refused by the server (" + code + "): log in again.", false);
      return;
    }
    setConnection("Reconnecting…", false);
    // Every other code (1000, 1001, 1005, …) is a server restart or a proxy: come back.
    if (HTMX_RECONNECTS.indexOf(code) < 0 && socket) {
      setTimeout(function () { if (!open) socket.reconnect(); },
        htmx.config.wsReconnectDelay(retries++));
    }
  });

  // Heartbeat: ping with the stamp; the server answers "pong" if the view is current,
  // else sends the full view. One unanswered ping: ask for a full resync; two: the
  // socket is dead without knowing it, so reconnect.
  setInterval(function () {
    if (!socket || !open) return;
    var missed = pinged && heard < pinged;
    if (missed && heard < pinged - HEARTBEAT_MS) return reconnect();
    pinged = Date.now();
    send(missed ? { action: "sync" } : { action: "ping", v: stamp });
  }, HEARTBEAT_MS);

  // A phone waking up: timers slept, broadcasts may be lost, the socket may be dead.
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState !== "visible" || !socket || !open) return; // else retrying
    if (Date.now() - heard > 2 * HEARTBEAT_MS) return reconnect();
    pinged = Date.now();
    send({ action: "sync" });
  });

  // "Waiting for 1:23" clocks on the dashboard.
  setInterval(function () {
    var now = Date.now() / 1000;
    document.querySelectorAll("time.since[data-since]").forEach(function (el) {
      var s = Math.max(0, Math.floor(now - parseFloat(el.dataset.since)));
      el.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
    });
  }, 1000);

  // Theme: base.html set <html data-theme> before first paint; the header's toggle
  // flips it and remembers the choice on this device.
  var THEME_KEY = "narrator-theme";
  function showTheme() {
    var toggle = $("theme-toggle");
    if (toggle) toggle.setAttribute("aria-pressed", String(document.documentElement.dataset.theme === "dark"));
  }
  document.addEventListener("click", function (evt) {
    var toggle = evt.target.closest && evt.target.closest("#theme-toggle");
    if (!toggle) return;
    var theme = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
    document.documentElement.dataset.theme = theme;
    try { localStorage.setItem(THEME_KEY, theme); } catch (e) { /* private mode: this page only */ }
    showTheme();
  });
  showTheme();
  // No choice made on this device: follow the device when it switches (dusk, a dark hall).
  var prefersDark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)");
  if (prefersDark && prefersDark.addEventListener) {
    prefersDark.addEventListener("change", function (evt) {
      var chosen = null;
      try { chosen = localStorage.getItem(THEME_KEY); } catch (e) { /* none */ }
      if (chosen) return;
      document.documentElement.dataset.theme = evt.matches ? "dark" : "light";
      showTheme();
    });
  }

  // A form with data-confirm (the header's "Log out") asks once before it goes.
  document.addEventListener("submit", function (evt) {
    var question = evt.target.dataset && evt.target.dataset.confirm;
    if (question && !window.confirm(question)) evt.preventDefault();
  });

  // "Challenge someone" folded sticks to an edge of the screen (narrator.css);
  // opened, its form is brought into view wherever the page was scrolled.
  document.addEventListener("toggle", function (evt) {
    var details = evt.target;
    if (details.matches && details.matches("details.start") && details.open) {
      details.scrollIntoView({ block: "start" });
    }
  }, true);
})();

// Sessions: a dashboard whose session was followed by a new one is told
// {"type": "goto", "url": "/narrate/<id>/"} and goes there (same site only).
(function () {
  "use strict";
  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var message = evt.detail.message;
    if (typeof message !== "string" || message.charAt(0) !== "{") return;
    var data;
    try { data = JSON.parse(message); } catch (e) { return; }
    if (data.type === "goto" && typeof data.url === "string" && /^\/[^\/\\]/.test(data.url)) location.replace(data.url);
  });
})();
