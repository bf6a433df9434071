// Narrator's client glue around htmx's ws extension. The server owns all state;
// this script only (1) gives every action an id and keeps it until the server
// acknowledges it, in the browser's storage too (a reload loses nothing): the
// button that sent it says "sending…", and after a reconnect it is resent with
// the same id (the server answers a repeat "already done"), at most a few times,
// (2) shows errors and drops the action they answer (never resent: a refusal,
// "Too many messages" too, changed nothing and is the player's to retry),
// (3) says "Connected" only while the socket is open and answering: a send
// (action or heartbeat) with no frame back within a few seconds, or the
// browser going offline, shows "Reconnecting…" and reconnects,
// (4) reconnects on every close code except the server's refusals (4xxx), with
// a jittered backoff capped at a few seconds; a flood close (4429) waits a little
// longer, a login refused (4401) goes to the login page, a page no longer hers
// (4410: a character given away, a narrator role taken) to her home page, (5) runs an app-level
// heartbeat that echoes the view's stamp, and asks for a full resync when the
// screen wakes, (6) ticks the "waiting for" clocks on the dashboard.
(function () {
  "use strict";
  var HEARTBEAT_MS = window.NARRATOR_HEARTBEAT_MS || 10000; // tests shorten it
  var ANSWER_MS = window.NARRATOR_ANSWER_MS || 3000; // a send unanswered this long: link lost
  var ANSWER_CAP_MS = 30000; // a slow server (answers late, not never): the wait doubles up to this
  // A socket just opened waits longer for its first frame (the view): the
  // handshake proved the server alive, and in a reconnect storm it is busy
  // rendering views; giving up sooner would only queue more of them.
  var CONNECT_ANSWER_MS = 10000;
  var BACKOFF_CAP_MS = 4000; // reconnect delays: full jitter, never longer than this
  var FLOOD_PAUSE_MS = 3000; // after a 4429 close: this pause plus up to as much again
  var MAX_RESENDS = 3; // reconnects an unacknowledged action is resent on before giving up
  var PENDING_MAX_AGE_MS = 10 * 60 * 1000; // older unacknowledged actions are dropped
  var SLOW_MS = window.NARRATOR_SLOW_MS || 5000; // an action unacknowledged this long: say so
  var LOGIN_URL = "/accounts/login/"; // settings.LOGIN_URL
  var HOME_URL = "/"; // her characters and chronicles (characters.urls)
  var HTMX_RECONNECTS = [1006, 1011, 1012, 1013]; // codes htmx's ws extension retries itself
  var pending = new Map(); // id -> {body: JSON sent, at: ms first sent, tries: resends}
  var sentFrom = new Map(); // id -> the form[data-reset-on-ack] it came from
  var socket = null; // htmx's socket wrapper (public interface)
  var current = null; // the browser WebSocket htmx opened last
  var open = false;
  var answered = false; // a frame arrived since the socket opened
  var awaiting = 0; // when the oldest send not yet followed by any frame went out
  var due = 0; // when a frame is due at the latest (0: none awaited)
  var answerMs = ANSWER_MS;
  var stamp = ""; // the server's stamp of the last view frame ("<!--v:STAMP-->")
  var heard = Date.now(); // last frame of any kind from the server
  var retries = 0; // reconnects we started since the last open
  var root = document.querySelector("[ws-connect]");
  // One list per socket path: a phone per character, a dashboard per session.
  var STORE = root && "narrator.pending:" + root.getAttribute("ws-connect");

  // htmx's default backoff grows to 64 s; a phone at a game should be back in seconds.
  htmx.config.wsReconnectDelay = function (retryCount) {
    return Math.random() * Math.min(BACKOFF_CAP_MS, 500 * Math.pow(2, retryCount));
  };
  // Know which socket is current, so the close of one we replaced is not a reason to reconnect.
  var createWebSocket = htmx.createWebSocket || function (url) { return new WebSocket(url); };
  // A reconnect names the stamp of what the screen shows (?v=STAMP): when nothing
  // changed meanwhile the server answers "pong" instead of re-rendering the view.
  // A phone names its cards too (&open=ID.VERSION,...&done=...: each card's
  // data-version, in screen order), so that only the cards that changed while
  // it was away are sent; the server checks the list against the stamp.
  htmx.createWebSocket = function (url) {
    var base = url.split("?")[0];
    var query = stamp ? "?v=" + encodeURIComponent(stamp) + shownCards() : "";
    current = createWebSocket(base + query);
    return current;
  };
  function shownCards() {
    var query = "";
    ["open", "done"].forEach(function (list) {
      var box = document.getElementById(list + "-cards");
      if (!box) return;
      var cards = [];
      box.querySelectorAll("article.card[data-version]").forEach(function (card) {
        cards.push(card.id.slice(5) + "." + card.getAttribute("data-version"));
      });
      query += "&" + list + "=" + cards.join(",");
    });
    return query;
  }

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
  // A notice; "sticky" ones (an action not confirmed, or given up) stay until
  // replaced or, for the first kind, until the action is answered.
  function notify(text, sticky) {
    var el = $("notice");
    if (!el) return;
    el.textContent = text;
    el.hidden = !text;
    el.dataset.duringTimeOut = document.querySelector(".time-out.active") ? "1" : "";
    el.dataset.sticky = sticky || "";
    clearTimeout(notify.timer);
    if (text && !sticky) notify.timer = setTimeout(function () { el.hidden = true; }, 6000);
  }
  // Any send expects some frame back within answerMs (see the deadline below).
  function expectAnswer() {
    if (awaiting) return;
    awaiting = Date.now();
    due = awaiting + answerMs;
  }
  function send(payload) {
    if (!socket || !open) return;
    expectAnswer();
    socket.send(JSON.stringify(payload));
  }
  function reconnect() {
    open = false;
    answered = false;
    awaiting = due = 0;
    setConnection("Reconnecting…", false);
    // Forget the old socket first: htmx's ws extension would retry a late 1006
    // close of it and replace the new one.
    if (current) {
      current.onclose = null;
      current.onerror = null;
      if (current.readyState < 2) current.close(); // CONNECTING or OPEN
    }
    if (socket) socket.reconnect(); // opens a new one
  }

  // Unacknowledged actions, kept in localStorage too (read and written entry by
  // entry, so two tabs of one page do not overwrite each other's).
  function stored() {
    try { return JSON.parse(localStorage.getItem(STORE)) || {}; } catch (e) { return {}; }
  }
  function store(change) {
    if (!STORE) return;
    try {
      var entries = stored();
      change(entries);
      if (Object.keys(entries).length) localStorage.setItem(STORE, JSON.stringify(entries));
      else localStorage.removeItem(STORE);
    } catch (e) { /* storage full or forbidden: they are still kept in memory */ }
  }
  function remember(id, entry) {
    pending.set(id, entry);
    store(function (entries) { entries[id] = entry; });
  }
  function forget(id) {
    pending.delete(id);
    store(function (entries) { delete entries[id]; });
  }
  function enableForms() {
    document.querySelectorAll("form[ws-send] button[disabled]").forEach(function (b) {
      b.disabled = false;
    });
  }

  // The button an action was sent with: in a ws-send form whose hidden fields
  // (action, challenge) match it, the button whose name and value it carries,
  // else the form's first button. Null if none is on screen.
  function senderOf(body) {
    var forms = document.querySelectorAll("form[ws-send]");
    for (var i = 0; i < forms.length; i++) {
      var form = forms[i];
      var hidden = form.querySelectorAll("input[type=hidden][name]");
      var same = hidden.length > 0;
      for (var j = 0; j < hidden.length && same; j++) {
        same = String(body[hidden[j].name]) === hidden[j].value;
      }
      if (!same) continue;
      var buttons = form.querySelectorAll("button");
      for (var k = 0; k < buttons.length; k++) {
        var b = buttons[k];
        if (b.name ? String(body[b.name]) === b.value : !form.querySelector("button[name]")) return b;
      }
    }
    return null;
  }
  // Every button whose action is not yet acknowledged says "sending…" (its form
  // stays disabled); run after every frame, which may have redrawn it.
  function markPending() {
    document.querySelectorAll("button.sending").forEach(function (b) {
      b.classList.remove("sending");
      b.querySelectorAll(".sending-label").forEach(function (label) { label.remove(); });
    });
    pending.forEach(function (entry) {
      var body;
      try { body = JSON.parse(entry.body); } catch (e) { return; }
      var button = senderOf(body);
      if (!button) return;
      button.classList.add("sending");
      var label = document.createElement("span");
      label.className = "sending-label";
      label.textContent = " sending…";
      button.appendChild(label);
      button.form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    });
  }
  // What an action is called on screen: its button's words ("Time out",
  // "Paper"), else "Your last action".
  function actionWords(entry) {
    var body;
    try { body = JSON.parse(entry.body); } catch (e) { return "Your last action"; }
    var button = senderOf(body);
    var text = button ? button.textContent.replace("sending…", "").trim() : "";
    return text ? "“" + text + "”" : "Your last action";
  }
  // An action unanswered for SLOW_MS (the server busy, or the link lost and
  // the action waiting to be resent) is named on screen, in words, until it
  // is answered or given up: a button saying "sending…" is easy to miss.
  setInterval(function () {
    var el = $("notice");
    if (!el) return;
    var now = Date.now();
    var slowest = null;
    pending.forEach(function (entry) {
      if (now - entry.at >= SLOW_MS && (!slowest || entry.at < slowest.at)) slowest = entry;
    });
    if (slowest) {
      // Said once per action (the notice is an alert: a screen reader reads
      // each change aloud), not rewritten every second.
      var text = actionWords(slowest) + " is not confirmed yet: the server has not answered. " +
        "It is sent again as soon as the connection allows; nothing is done twice.";
      if (el.dataset.sticky !== "slow" || el.textContent !== text || el.hidden) notify(text, "slow");
    } else if (el.dataset.sticky === "slow") {
      notify("");
    }
  }, 1000);

  // On each (re)connect: each unacknowledged action once more, with its id;
  // one resent MAX_RESENDS times already (or too old) is given up.
  function resendPending() {
    var now = Date.now();
    var gaveUp = false;
    pending.forEach(function (entry, id) {
      if (now - entry.at > PENDING_MAX_AGE_MS) return forget(id);
      if (entry.tries >= MAX_RESENDS) {
        gaveUp = true;
        return forget(id);
      }
      remember(id, { body: entry.body, at: entry.at, tries: entry.tries + 1 });
      expectAnswer();
      socket.send(entry.body);
    });
    if (gaveUp) {
      notify("Not sent: the server never answered. Check the screen, then try again.", "gave-up");
      enableForms();
      markPending();
    }
  }

  // A form's data-lists names fields always sent as lists (htmx sends one
  // checked box as a string, two as a list: "bids": ["Quick", "Tough"]);
  // data-bools names fields sent as true/false ("cancel", "surprise");
  // data-optional names fields left out when blank.
  function typedFields(form, params) {
    if (!form || !form.dataset) return;
    (form.dataset.lists || "").split(/\s+/).forEach(function (name) {
      if (!name) return;
      var value = params[name];
      if (value === undefined) return; // not in this frame (a one-tap bid sends "bid")
      params[name] = value === "" ? [] : Array.isArray(value) ? value : [value];
    });
    (form.dataset.bools || "").split(/\s+/).forEach(function (name) {
      if (!name) return;
      var value = params[name];
      params[name] = value === true || value === "true" || value === "on";
    });
    // data-optional: fields left out of the frame when blank, false or empty
    // (a plain bid carries no "stakes": the frame has exactly its fields).
    (form.dataset.optional || "").split(/\s+/).forEach(function (name) {
      var value = params[name];
      if (name && (value === "" || value === false || (Array.isArray(value) && !value.length))) {
        delete params[name];
      }
    });
  }

  document.addEventListener("htmx:wsConfigSend", function (evt) {
    var params = evt.detail.parameters;
    var trigger = evt.detail.triggeringEvent;
    var submitter = trigger && trigger.submitter;
    if (submitter && submitter.name) params[submitter.name] = submitter.value;
    var form = evt.detail.elt || (trigger && trigger.target);
    typedFields(form, params);
    params.id = newId();
    evt.detail.headers = null; // htmx's HEADERS block is not used by the server
    // Sent now, or (socket closed) queued by htmx and first sent on the next open.
    remember(params.id, { body: JSON.stringify(params), at: Date.now(), tries: open ? 0 : -1 });
    if (open) expectAnswer();
    if (form && form.matches && form.matches("form[data-reset-on-ack]")) sentFrom.set(params.id, form);
    if (form && form.querySelectorAll) {
      form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    }
    markPending();
  });

  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var message = evt.detail.message;
    heard = Date.now(); // any frame proves the socket alive
    if (awaiting && heard - awaiting < ANSWER_MS) answerMs = ANSWER_MS; // a timely answer
    awaiting = due = 0;
    if (open && !answered) {
      answered = true;
      setConnection("Connected", true);
    }
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
      forget(data.id);
      // A form no view re-renders (the phone's "Challenge someone") starts blank once done.
      if (sentFrom.has(data.id)) sentFrom.get(data.id).reset();
      sentFrom.delete(data.id);
      // Forms the server never re-renders (the narrator's) are ready for the next one.
      document.querySelectorAll("form[data-reusable] button[disabled]").forEach(function (b) {
        b.disabled = false;
      });
      markPending();
    } else if (data.type === "error") {
      if (data.id) forget(data.id);
      sentFrom.delete(data.id);
      notify(data.message);
      enableForms();
      markPending();
    }
  });

  // A refusal raised during a Time out is stale once the narrator resumes play.
  document.addEventListener("htmx:wsAfterMessage", function () {
    var el = $("notice");
    if (el && !el.hidden && el.dataset.duringTimeOut && !document.querySelector(".time-out.active")) {
      notify("");
    }
    if (pending.size) markPending(); // the frame may have redrawn a sending button
  });

  document.addEventListener("htmx:wsOpen", function (evt) {
    socket = evt.detail.socketWrapper;
    open = true;
    answered = false; // "Connected" once the first frame (the view or "pong") arrives
    retries = 0;
    heard = Date.now();
    awaiting = heard;
    due = heard + Math.max(answerMs, CONNECT_ANSWER_MS);
    // Replay what the server never acknowledged (same ids: a repeat is answered
    // "already_done" and applies nothing twice). htmx's own queue (forms sent
    // while closed) holds only actions among them: it would send them twice.
    resendPending();
    socket.queue.splice(0);
  });

  function leave(code) {
    // A login that ended (logged out, link revoked): log in again, then back here.
    setConnection("Logged out (" + code + "): to the login page…", false);
    window.location.assign(LOGIN_URL + "?next=" + encodeURIComponent(location.pathname + location.search));
  }

  document.addEventListener("htmx:wsClose", function (evt) {
    var event = evt.detail.event || {};
    if (current && event.target && event.target !== current) return; // one we replaced
    open = false;
    answered = false;
    awaiting = due = 0;
    socket = evt.detail.socketWrapper || socket;
    var code = event.code;
    if (code === 4429) {
      // A flood: the server closed us for sending too much. Come back after a pause.
      setConnection("Too many messages: reconnecting in a moment", false);
      setTimeout(function () { if (!open && socket) socket.reconnect(); },
        FLOOD_PAUSE_MS * (1 + Math.random()));
      return;
    }
    if (code === 4401) return leave(code);
    if (code === 4410) {
      // Still logged in, but this page is no longer hers (a narrator gave the
      // character to someone else, or took her narrator role): her home page.
      setConnection("No longer yours (4410): a narrator changed this. To your characters…", false);
      return window.location.assign(HOME_URL);
    }
    if (code === 4403) {
      return setConnection("Not allowed here (4403): this page is not yours. Log in again, or ask a narrator.", false);
    }
    if (code === 4404) return setConnection("Nothing to play here (4404): ask a narrator.", false);
    if (code >= 4000 && code < 5000) {
      return setConnection("Refused by the server (" + code + "): reload the page.", false);
    }
    setConnection("Reconnecting…", false);
    // Every other code (1000, 1001, 1005, …) is a server restart or a proxy: come back.
    if (HTMX_RECONNECTS.indexOf(code) < 0 && socket) {
      setTimeout(function () { if (!open) socket.reconnect(); },
        htmx.config.wsReconnectDelay(retries++));
    }
  });

  // The deadline: a send with no frame back within answerMs means the link is
  // gone (or the server far too slow: then the next wait is twice as long).
  setInterval(function () {
    if (!open || !due || Date.now() < due) return;
    answerMs = Math.min(2 * answerMs, ANSWER_CAP_MS);
    reconnect();
  }, 250);

  // The phone lost its network: no need to wait for a deadline.
  window.addEventListener("offline", function () {
    if (socket) reconnect();
    else setConnection("Reconnecting…", false);
  });
  window.addEventListener("online", function () {
    if (socket && !open) reconnect();
  });

  // Heartbeat: ping with the stamp; the server answers "pong" if the view is
  // current, else sends the full view. No answer in time: the deadline reconnects.
  setInterval(function () {
    send({ action: "ping", v: stamp });
  }, HEARTBEAT_MS);

  // A phone waking up: timers slept, broadcasts may be lost, the socket may be dead.
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState !== "visible" || !socket || !open) return; // else retrying
    if (Date.now() - heard > 2 * HEARTBEAT_MS) return reconnect();
    send({ action: "sync" });
  });

  // Actions left unacknowledged by the last page (a reload): resent on the
  // first connect, their buttons marked meanwhile.
  var saved = stored();
  Object.keys(saved).forEach(function (id) {
    var entry = saved[id];
    if (entry && typeof entry.body === "string" && Date.now() - entry.at < PENDING_MAX_AGE_MS) {
      pending.set(id, { body: entry.body, at: entry.at, tries: entry.tries || 0 });
    } else {
      forget(id);
    }
  });
  markPending();

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

  // "Challenge someone" fetches who is here each time it opens (_start.html),
  // and the search box fetches its matches: an opponent she picked before the
  // list lands stays picked when the new list still has her. Issue 14: on a
  // loaded server the list came a moment after her tap and unchecked it, and
  // the browser stopped her bid ("Please select one of these options").
  var picked = null;
  document.addEventListener("htmx:beforeSwap", function (evt) {
    var target = evt.detail.target;
    if (!target || target.id !== "opponent-results") return;
    var checked = target.querySelector("input[name=defender]:checked");
    picked = checked ? checked.value : null;
  });
  document.addEventListener("htmx:afterSwap", function (evt) {
    var target = evt.detail.target;
    if (!target || target.id !== "opponent-results" || picked === null) return;
    target.querySelectorAll("input[name=defender]").forEach(function (input) {
      if (input.value === picked) input.checked = true;
    });
    picked = null;
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

// s11 clocks: health clock countdowns (time.countdown[data-remaining]: seconds
// of play left when the server rendered it, challenges.services.clocks). They
// count down in the browser and stand still while a Time out is shown
// (#time-out.active); at zero they read "now" and the server's next heartbeat
// applies the effect and redraws the screen.
(function () {
  "use strict";
  var left = new WeakMap(); // element -> seconds left (a redraw brings a new element)
  function show(el, s) {
    s = Math.max(0, Math.ceil(s));
    el.textContent = s ? Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0") : "now";
  }
  var last = Date.now();
  setInterval(function () {
    var now = Date.now();
    var step = (now - last) / 1000;
    last = now;
    var frozen = !!document.querySelector("#time-out.active");
    document.querySelectorAll("time.countdown[data-remaining]").forEach(function (el) {
      var s = left.has(el) ? left.get(el) : parseFloat(el.dataset.remaining);
      if (!frozen) s -= step;
      left.set(el, s);
      el.dataset.left = String(Math.max(0, Math.ceil(s))); // read by the dashboard's "Needs a narrator"
      show(el, s);
    });
  }, 1000);
})();
