// Narrator's service worker (narrator/pwa.py serves it at /sw.js; scope: the site).
// The network first, always: nothing here ever hides a newer page or file.
// Offline, a page is the copy phone.js keeps of it as last seen (cache
// "narrator-pages", key: its path), which says "Offline: your moves will be sent
// when the connection returns"; a page never seen on this phone gets a short page
// saying so, never the browser's error page. Static files (the app's shell:
// scripts, styles, icons) come from "narrator-shell", refreshed on every fetch.
"use strict";
var PAGES = "narrator-pages";
var SHELL = "narrator-shell";
var STATIC = new URL("{{ static_url|escapejs }}", self.location.origin).pathname;
var NEVER_SEEN = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">" +
  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Offline · Narrator</title></head>" +
  "<body style=\"font: 17px/1.4 system-ui, sans-serif; margin: 1rem\"><p id=\"link-lost\" role=\"alert\">" +
  "Offline: this page was never opened on this phone. It opens when the connection returns.</p>" +
  "<p><button onclick=\"location.reload()\">Try again</button></p></body></html>";

self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (evt) { evt.waitUntil(self.clients.claim()); });

function lastSeen(url) {
  return caches.open(PAGES).then(function (cache) { return cache.match(url.pathname); }).then(function (page) {
    return page || new Response(NEVER_SEEN, { headers: { "Content-Type": "text/html; charset=utf-8" } });
  });
}

self.addEventListener("fetch", function (evt) {
  var request = evt.request;
  if (request.method !== "GET") return;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    evt.respondWith(fetch(request).catch(function () { return lastSeen(url); }));
  } else if (url.pathname.indexOf(STATIC) === 0) {
    evt.respondWith(fetch(request).then(function (response) {
      if (response.ok) {
        var copy = response.clone();
        caches.open(SHELL).then(function (cache) { return cache.put(request, copy); });
      }
      return response;
    }).catch(function () {
      return caches.match(request).then(function (kept) { return kept || Response.error(); });
    }));
  }
});
