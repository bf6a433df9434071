// The narrator's dashboard, beside app.js (which owns the socket): the "Open
// only" filter (remembered per device), results folding to one line a few
// minutes after they resolve, the roster's search box (the roster is filtered
// here: 100 rows need no server search), the character panel (close, kept
// current while open), and the Void and "Force a retest" dialogs (a reason, then
// a confirming button); s11: the "Rule…" dialog, and a beep and a vibration
// for each new call for a narrator.
// The server places every row (challenges.views.dashboard_place); nothing here
// reorders them.
(function () {
  "use strict";
  var OPEN_ONLY_KEY = "narrator.dashboard.openOnly";

  function $(id) { return document.getElementById(id); }

  // "Open only": the checkbox hides the results (CSS); the choice outlives a reload.
  var openOnly = $("open-only");
  if (openOnly) {
    try { openOnly.checked = localStorage.getItem(OPEN_ONLY_KEY) === "1"; } catch (e) { /* private mode */ }
    openOnly.addEventListener("change", function () {
      try { localStorage.setItem(OPEN_ONLY_KEY, openOnly.checked ? "1" : ""); } catch (e) { /* ignore */ }
    });
  }

  // Results fold to their outcome line once older than data-fold-after seconds (the server
  // folds them at render too); one the narrator opens again stays open.
  function fold() {
    var list = $("challenge-list"); // data-fold-after: views.RESULT_COLLAPSE_SECONDS
    if (!list) return;
    var old = Date.now() / 1000 - parseFloat(list.dataset.foldAfter || "180");
    document.querySelectorAll("#recent-results details.result[open]:not([data-folded])").forEach(function (d) {
      var row = d.closest("article[data-since]");
      if (row && parseFloat(row.dataset.since) < old) {
        d.open = false;
        d.dataset.folded = "1";
      }
    });
  }
  setInterval(fold, 5000);
  fold();

  // Roster search: show the rows whose name contains what is typed (any case).
  var search = $("roster-search");
  function filterRoster() {
    if (!search) return;
    var query = search.value.trim().toLocaleLowerCase();
    var shown = 0;
    document.querySelectorAll("#roster > li").forEach(function (li) {
      var name = li.querySelector(".name");
      var match = !query || (name && name.textContent.toLocaleLowerCase().indexOf(query) >= 0);
      li.hidden = !match;
      if (match) shown++;
    });
    var none = $("roster-none");
    if (none) none.hidden = shown > 0 || !query;
  }
  if (search) search.addEventListener("input", filterRoster);

  // The character panel: closed by its button or Escape; redrawn (its live part
  // parts only, so a form being filled survives) when a frame touches her.
  var panel = $("character-panel");
  var refreshTimer = null;
  function panelSheet() { return panel && panel.querySelector("[data-character]"); }
  function closePanel() { if (panel) panel.innerHTML = ""; }
  document.addEventListener("click", function (evt) {
    var close = evt.target.closest("[data-close-panel]");
    if (close) { evt.preventDefault(); closePanel(); }
  });
  document.addEventListener("keydown", function (evt) {
    if (evt.key === "Escape" && panelSheet() && !document.querySelector("dialog[open]")) closePanel();
  });
  // A frame names her when one of its data-characters=" 3 7 12 " lists her id
  // (a challenge row names two; a combat block everyone in it).
  function namesHer(message, id) {
    var lists = /data-characters="([^"]*)"/g, found;
    while ((found = lists.exec(message)) !== null) {
      if ((" " + found[1] + " ").indexOf(" " + id + " ") >= 0) return true;
    }
    return false;
  }
  function refreshPanel(message) {
    var sheet = panelSheet();
    if (!sheet || typeof message !== "string") return;
    var id = sheet.dataset.character;
    if (message.indexOf('id="roster-' + id + '"') < 0 && !namesHer(message, id)) return;
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(function () {
      if (panelSheet() !== sheet) return;
      fetch(sheet.dataset.url, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : ""; })
        .then(function (html) {
          if (!html || panelSheet() !== sheet) return;
          var fresh = new DOMParser().parseFromString(html, "text/html");
          ["panel-live", "panel-history"].forEach(function (id) {
            var part = fresh.getElementById(id);
            var old = $(id);
            if (part && old) {
              old.replaceWith(part);
              htmx.process(part); // its ws-send forms (presence) must send again
            }
          });
        });
    }, 300);
  }

  // Void and "Force a retest": the row's button opens one dialog for that
  // challenge (a reason, then a confirming button); the form (ws-send) needs a
  // reason; the dialog closes when the server answers.
  var dialogs = [
    { dialog: $("void-dialog"), trigger: "[data-void]", id: "void", label: "[data-void-name]" },
    { dialog: $("force-dialog"), trigger: "[data-force-retest]", id: "forceRetest", label: "[data-force-name]" },
  ].filter(function (d) { return d.dialog; });
  dialogs.forEach(function (d) {
    d.form = d.dialog.querySelector("form[ws-send]");
    d.sent = null; // the id app.js gave the action we sent
  });
  // "#12 Helen vs Grady": the row's number and its two sides, from its head
  // (the first name, then the one after " vs "; a bid's names sit between).
  function rowName(button) {
    var row = button.closest("article");
    var head = row && row.querySelector(".row-head");
    if (!head) return row ? row.getAttribute("aria-label") || "" : "";
    var num = head.querySelector(".num") || row.querySelector(".num");
    var names = [];
    var afterVs = false;
    head.childNodes.forEach(function (node) {
      if (node.nodeType === 3 && node.textContent.indexOf(" vs ") >= 0) afterVs = true;
      if (node.nodeType === 1 && node.tagName === "BDI" && (names.length === 0 || (afterVs && names.length === 1))) {
        names.push(node.textContent);
      }
    });
    return (num ? num.textContent + " " : "") + names.join(" vs ");
  }
  document.addEventListener("click", function (evt) {
    for (var i = 0; i < dialogs.length; i++) {
      var d = dialogs[i];
      var button = evt.target.closest(d.trigger);
      if (!button) continue;
      d.form.reset();
      d.form.elements.challenge.value = button.dataset[d.id];
      d.dialog.querySelector(d.label).textContent = rowName(button);
      d.form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      d.dialog.showModal();
      d.form.elements.reason.focus();
      return;
    }
    var closer = evt.target.closest("[data-close-dialog]");
    if (closer && closer.closest("dialog")) closer.closest("dialog").close();
  });
  document.addEventListener("htmx:wsConfigSend", function (evt) {
    var form = evt.detail.elt;
    dialogs.forEach(function (d) {
      if (form && form === d.form) d.sent = evt.detail.parameters.id; // set by app.js
    });
  });

  // app.js takes JSON frames (acks, errors) before htmx: they never reach wsAfterMessage.
  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var message = evt.detail.message;
    if (typeof message !== "string" || message.charAt(0) !== "{") return;
    var data;
    try { data = JSON.parse(message); } catch (e) { return; }
    if (data.type !== "ack" && data.type !== "error") return;
    dialogs.forEach(function (d) {
      if (d.sent && data.id === d.sent) {
        d.sent = null;
        if (d.dialog.open) d.dialog.close(); // an error shows in #notice, above the page
      }
    });
  });

  // --- s11 rulings ------------------------------------------------------------
  // "Rule…" on a row loads the challenge's rulings into #rule-body (htmx) and
  // opens the dialog; it closes when the server acknowledges a ruling sent
  // from it (an error stays in #notice, the dialog open).
  // A late arrival's <option> appended out of band (or the lists filled again
  // after someone left) must not change whom the narrator picked for a static
  // challenge or a simple test: htmx's swap selects the new option.
  var picked = {};
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var target = evt.detail.target;
    if (target && target.tagName === "SELECT" && target.id) picked[target.id] = target.value;
  });
  document.addEventListener("htmx:oobAfterSwap", function (evt) {
    var target = evt.detail.target;
    if (!target || target.tagName !== "SELECT" || !(target.id in picked)) return;
    var value = picked[target.id];
    delete picked[target.id];
    for (var i = 0; i < target.options.length; i++) {
      if (target.options[i].value === value) {
        target.value = value;
        return;
      }
    }
  });

  // Rows and roster rows carry no htmx attributes of their own (a crowd's
  // first view is mostly rows): "Rule…" (data-rule, its URL) loads the
  // challenge's rulings into #rule-body; a roster name (a.who, its href)
  // loads her panel into #character-panel. A click with a modifier key opens
  // the link as any link.
  document.addEventListener("click", function (evt) {
    var rule = evt.target.closest("[data-rule]");
    if (rule) {
      evt.preventDefault();
      htmx.ajax("GET", rule.dataset.rule, { target: "#rule-body", source: rule });
      return;
    }
    var who = evt.target.closest("#roster a.who");
    if (who && !(evt.ctrlKey || evt.metaKey || evt.shiftKey || evt.button)) {
      evt.preventDefault();
      htmx.ajax("GET", who.getAttribute("href"), { target: "#character-panel", source: who });
    }
  });

  var ruleDialog = $("rule-dialog");
  var ruleSent = null;
  document.addEventListener("htmx:afterSwap", function (evt) {
    if (ruleDialog && evt.detail.target && evt.detail.target.id === "rule-body" && !ruleDialog.open) {
      ruleDialog.showModal();
    }
  });
  document.addEventListener("htmx:wsConfigSend", function (evt) {
    var form = evt.detail.elt;
    if (ruleDialog && form && form.closest && form.closest("#rule-dialog")) ruleSent = evt.detail.parameters.id;
  });
  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var message = evt.detail.message;
    if (!ruleSent || typeof message !== "string" || message.charAt(0) !== "{") return;
    var data;
    try { data = JSON.parse(message); } catch (e) { return; }
    if (data.id !== ruleSent) return;
    ruleSent = null;
    if (data.type === "ack" && ruleDialog.open) ruleDialog.close();
    if (data.type === "error") {
      ruleDialog.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    }
  });

  // A call for a narrator: its row sits on top (the server places it); the
  // tablet beeps (Web Audio) and vibrates once per new call. Browsers let a
  // page play sound only after a tap, so the first tap anywhere unlocks it.
  var audio = null;
  function unlockAudio() {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    if (!audio && Ctx) { try { audio = new Ctx(); } catch (e) { audio = null; } }
    if (audio && audio.state === "suspended") audio.resume();
  }
  document.addEventListener("pointerdown", unlockAudio, { passive: true });
  function beep() {
    if (audio) {
      try {
        var osc = audio.createOscillator();
        var gain = audio.createGain();
        osc.frequency.value = 880;
        gain.gain.setValueAtTime(0.2, audio.currentTime);
        gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
        osc.connect(gain);
        gain.connect(audio.destination);
        osc.start();
        osc.stop(audio.currentTime + 0.4);
      } catch (e) { /* no sound: the row is still on top */ }
    }
    if (navigator.vibrate) { try { navigator.vibrate([200, 100, 200]); } catch (e) { /* ignore */ } }
    document.body.dataset.calls = String(parseInt(document.body.dataset.calls || "0", 10) + 1);
  }
  var callsSeen = {};
  function checkCalls(alert) {
    document.querySelectorAll("article[data-called-at]").forEach(function (row) {
      var key = row.id + "@" + row.dataset.calledAt;
      if (callsSeen[key]) return;
      callsSeen[key] = true;
      if (alert) beep();
    });
  }
  checkCalls(false); // calls already on the page when it loads: no beep

  document.addEventListener("htmx:wsAfterMessage", function (evt) {
    filterRoster(); // rows arrived or were redrawn
    fold();
    refreshPanel(evt.detail.message);
    checkCalls(true);
  });
})();

// s11 clocks: an alert arrives on top of #clock-alerts when a health clock runs
// out or a character dies (challenges.consumers.NarrateConsumer.clock_alert):
// the tablet beeps (Web Audio, once the page has been touched: browsers allow
// sound only then) and vibrates where it can; "OK" takes the banner away.
(function () {
  "use strict";
  var box = document.getElementById("clock-alerts");
  if (!box) return;
  var audio = null;
  document.addEventListener("pointerdown", function () {
    if (!audio && (window.AudioContext || window.webkitAudioContext)) {
      audio = new (window.AudioContext || window.webkitAudioContext)();
    }
  }, { once: true });
  function ring() {
    if (navigator.vibrate) navigator.vibrate([200, 100, 200]);
    if (!audio) return;
    [0, 0.3].forEach(function (at) {
      var osc = audio.createOscillator();
      var gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.value = 0.2;
      osc.connect(gain).connect(audio.destination);
      osc.start(audio.currentTime + at);
      osc.stop(audio.currentTime + at + 0.2);
    });
  }
  new MutationObserver(function (changes) {
    var added = changes.some(function (c) { return c.addedNodes.length; });
    if (added) {
      box.dataset.rang = String(Number(box.dataset.rang || 0) + 1);
      ring();
    }
  }).observe(box, { childList: true });
  box.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("[data-dismiss-alert]");
    if (button) button.closest(".clock-alert").remove();
  });

  // --- Find a challenge --------------------------------------------------------
  // A counted choice (state, category, age) sets its hidden field (a second
  // tap on the chosen one clears it) and searches again (views.find).
  document.addEventListener("click", function (evt) {
    var chip = evt.target.closest("[data-find-set]");
    var form = $("find-form");
    if (!chip || !form) return;
    form.elements[chip.dataset.findSet].value = chip.value;
    htmx.trigger(form, "submit");
  });

  // --- Needs a narrator ------------------------------------------------------
  // What waits on a narrator, gathered from what the page shows live (its
  // rows, roster and mob scenes: the server keeps them current), every second
  // and after every swap, redrawn only when an entry comes, goes or changes
  // its words (its waiting time ticks by itself): calls for a narrator (the
  // oldest first), challenges waiting on someone longer than
  // LONG_WAIT_SECONDS (the longest first),
  // health clocks with less than CLOCK_SOON_SECONDS left, Mortally Wounded
  // characters, mob scenes waiting for the narrator to close the choosing.
  // Each entry is one tap from its action: a challenge's "Rule…", a
  // character's panel, the mob scene's own controls.
  function $(id) { return document.getElementById(id); }
  var LONG_WAIT_SECONDS = 180;
  var CLOCK_SOON_SECONDS = 120;
  var MORTALLY_WOUNDED = 4; // HealthLevel.MORTALLY_WOUNDED: the roster's health-4
  var needsList = $("needs-list");
  var needsShown = "";

  function clockText(seconds) {
    seconds = Math.max(0, Math.floor(seconds));
    return Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  }
  function rowLabel(row) {
    return row.getAttribute("aria-label") || row.id;
  }
  function rosterName(li) {
    var name = li.querySelector(".name");
    return name ? name.textContent.trim() : "";
  }
  function gatherNeeds() {
    var now = Date.now() / 1000;
    var needs = [];
    document.querySelectorAll("#called-challenges > article").forEach(function (row) {
      var call = row.querySelector(".call > span");
      var at = parseFloat(row.dataset.calledAt || row.dataset.since || now);
      needs.push({ key: "call-" + row.id, order: [0, at], target: row.id, act: "rule",
        text: (call ? call.textContent.trim() : "Narrator called") + " · " + rowLabel(row) + " · ",
        since: at, after: " ago" });
    });
    document.querySelectorAll("#open-challenges > article[data-since]").forEach(function (row) {
      var waited = now - parseFloat(row.dataset.since);
      if (waited < LONG_WAIT_SECONDS) return;
      var stage = row.querySelector(".stage-text");
      needs.push({ key: "wait-" + row.id, order: [1, -waited], target: row.id, act: "rule",
        text: rowLabel(row) + " · " + (stage ? stage.textContent.trim() : "waiting") + " · ",
        since: parseFloat(row.dataset.since), after: "" });
    });
    document.querySelectorAll("#roster > li").forEach(function (li) {
      var clock = li.querySelector("time.countdown[data-remaining]");
      if (clock) {
        var leftNow = parseFloat(clock.dataset.left || clock.dataset.remaining);
        if (leftNow < CLOCK_SOON_SECONDS) {
          needs.push({ key: "clock-" + li.id, order: [2, leftNow], target: li.id, act: "panel",
            text: rosterName(li) + "'s health clock: " + (leftNow > 0 ? clockText(leftNow) + " left" : "now") });
        }
      }
      if (li.querySelector(".health-" + MORTALLY_WOUNDED)) {
        needs.push({ key: "mortal-" + li.id, order: [3, 0], target: li.id, act: "panel",
          text: rosterName(li) + " is Mortally Wounded" });
      }
    });
    document.querySelectorAll("#mob-dashboard article[data-mob][data-stage=choosing]").forEach(function (mob) {
      var head = mob.querySelector("h3");
      needs.push({ key: "mob-" + mob.dataset.mob, order: [4, parseFloat(mob.dataset.mob)],
        target: null, mob: mob.dataset.mob, act: "scroll",
        text: (head ? head.textContent.trim() : "A mob scene") + ": close the choosing when all are in" });
    });
    needs.sort(function (a, b) {
      return a.order[0] - b.order[0] || a.order[1] - b.order[1];
    });
    return needs;
  }
  function drawNeeds() {
    if (!needsList) return;
    var needs = gatherNeeds();
    var shown = needs.map(function (n) { return n.key + "|" + n.text; }).join("\n");
    if (shown === needsShown) return;
    needsShown = shown;
    needsList.textContent = "";
    needs.forEach(function (need) {
      var li = document.createElement("li");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "secondary need need-" + need.key.split("-")[0];
      button.textContent = need.text;
      if (need.since !== undefined) {
        // app.js's ticker keeps every time.since[data-since] current: the
        // entry is not redrawn each second (a button keeps its focus).
        var since = document.createElement("time");
        since.className = "since";
        since.dataset.since = String(need.since);
        since.textContent = clockText(Date.now() / 1000 - need.since);
        button.appendChild(since);
        button.appendChild(document.createTextNode(need.after));
      }
      button.dataset.needAct = need.act;
      if (need.target) button.dataset.needTarget = need.target;
      if (need.mob) button.dataset.needMob = need.mob;
      li.appendChild(button);
      needsList.appendChild(li);
    });
    $("needs-none").hidden = needs.length > 0;
    $("needs-count").textContent = needs.length ? "(" + needs.length + ")" : "";
  }
  document.addEventListener("click", function (evt) {
    var need = evt.target.closest("[data-need-act]");
    if (!need) return;
    var target = need.dataset.needTarget && $(need.dataset.needTarget);
    if (need.dataset.needAct === "rule" && target) {
      var rule = target.querySelector("[data-rule]");
      if (rule) return rule.click();
    }
    if (need.dataset.needAct === "panel" && target) {
      var who = target.querySelector("a.who");
      if (who) return who.click();
    }
    var scrollTo = target || document.querySelector("#mob-dashboard article[data-mob='" + need.dataset.needMob + "']");
    if (scrollTo) {
      scrollTo.scrollIntoView({ block: "center" });
      scrollTo.classList.add("flash");
      setTimeout(function () { scrollTo.classList.remove("flash"); }, 1500);
    }
  });
  if (needsList) {
    setInterval(drawNeeds, 1000);
    document.addEventListener("htmx:afterSettle", drawNeeds);
    document.addEventListener("htmx:oobAfterSwap", drawNeeds);
    drawNeeds();
  }
})();
