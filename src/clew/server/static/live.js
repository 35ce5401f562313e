// clew's dashboard: live parts, nothing else (every page reads and every form posts without
// it). It follows /events, which says the journal's head seq whenever it moves, and then
// fetches this page again and swaps each [data-live] part by its id. A part holding the
// focus or an open <details> is left as it is, so a refresh never takes what a person is
// reading or typing. Written for clew (MIT, as clew); no build step, no dependency.
(function () {
  "use strict";
  if (!window.EventSource || !document.querySelector("[data-live]")) return;
  var seen = Number(document.body.dataset.seq || 0);
  var busy = false;
  var again = false;

  function keep(part) {
    return part.contains(document.activeElement) && document.activeElement !== document.body;
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: "same-origin", headers: { "X-Clew-Live": "1" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (text === null) return;
        var fresh = new DOMParser().parseFromString(text, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (part) {
          var next = part.id && fresh.getElementById(part.id);
          if (!next || keep(part)) return;
          var open = [];
          part.querySelectorAll("details").forEach(function (d, i) { if (d.open) open.push(i); });
          part.replaceWith(next);
          var details = next.querySelectorAll("details");
          open.forEach(function (i) { if (details[i]) details[i].open = true; });
        });
        document.body.dataset.seq = String(seen);
        document.dispatchEvent(new CustomEvent("clew:refreshed", { detail: seen }));
      })
      .catch(function () { /* the next event tries again */ })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  // The browser reconnects a dropped stream by itself every `retry` ms, forever. So on an
  // error the stream is closed and clew decides: a key no longer valid (401, 403) stops the
  // live parts for good (the next page load shows the key form); anything else (a restart,
  // the network) reconnects after a wait that doubles up to a minute.
  var wait = 2000;
  var source = null;

  function follow() {
    source = new EventSource("/events");
    source.addEventListener("open", function () { wait = 2000; });
    source.addEventListener("journal", function (event) {
      var seq = Number(event.data);
      if (seq > seen) { seen = seq; refresh(); }
    });
    source.addEventListener("error", function () {
      source.close();
      fetch(location.href, { credentials: "same-origin", headers: { "X-Clew-Live": "1" } })
        .then(function (response) { return response.status; }, function () { return 0; })
        .then(function (status) {
          if (status === 401 || status === 403) {
            document.body.dataset.live = "stopped";
            return;
          }
          setTimeout(follow, wait);
          wait = Math.min(wait * 2, 60000);
        });
    });
  }
  follow();
})();
