// Narrator's client glue around htmx's ws extension. The server owns all state;
// this script only (1) gives every action an id and keeps it until the server
// acknowledges it, resending unacknowledged actions after a reconnect (the
// server answers a repeat "already done"), (2) shows errors, (3) runs an
// app-level heartbeat and asks for a full resync when one is missed or the
// screen wakes, (4) ticks the "waiting for" clocks on the dashboard.
(function () {
  "use strict";
  var HEARTBEAT_MS = 10000;
  var pending = new Map(); // id -> JSON body not yet acknowledged
  var socket = null; // htmx's socket wrapper (public interface)
  var lastPong = Date.now();

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
    if (socket) socket.send(JSON.stringify(payload));
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
    if (form && form.querySelectorAll) {
      form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    }
  });

  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var message = evt.detail.message;
    if (typeof message !== "string" || message.charAt(0) !== "{") return; // a view fragment
    evt.preventDefault();
    var data;
    try { data = JSON.parse(message); } catch (e) { return; }
    lastPong = Date.now();
    if (data.type === "ack") {
      pending.delete(data.id);
      // Forms the server never re-renders (the narrator's) are ready for the next one.
      document.querySelectorAll("form[data-reusable] button[disabled]").forEach(function (b) {
        b.disabled = false;
      });
    } else if (data.type === "error") {
      pending.delete(data.id);
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
    lastPong = Date.now();
    setConnection("Connected", true);
    // The server sends the full view on connect; replay what it never acknowledged.
    pending.forEach(function (body) { socket.send(body); });
  });

  document.addEventListener("htmx:wsClose", function (evt) {
    var code = evt.detail.event && evt.detail.event.code;
    if (code >= 4000 && code < 5000) {
      setConnection("Refused by the server (" + code + "): log in again.", false);
      return;
    }
    setConnection("Reconnecting…", false);
    // htmx reconnects by itself only on 1006/1011/1012/1013; do it for the rest.
    if ([1006, 1011, 1012, 1013].indexOf(code) < 0 && evt.detail.socketWrapper) {
      setTimeout(function () { evt.detail.socketWrapper.reconnect(); }, 1000 + Math.random() * 2000);
    }
  });

  setInterval(function () {
    if (!socket) return;
    if (Date.now() - lastPong > 2.5 * HEARTBEAT_MS) {
      // Missed heartbeats: the socket is dead without knowing it.
      lastPong = Date.now();
      setConnection("Reconnecting…", false);
      socket.reconnect();
      return;
    }
    send({ action: "ping" });
  }, HEARTBEAT_MS);

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") send({ action: "sync" });
  });

  // "Waiting for 1:23" clocks on the dashboard.
  setInterval(function () {
    var now = Date.now() / 1000;
    document.querySelectorAll("time.since[data-since]").forEach(function (el) {
      var s = Math.max(0, Math.floor(now - parseFloat(el.dataset.since)));
      el.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
    });
  }, 1000);
})();
