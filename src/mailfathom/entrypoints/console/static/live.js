// Keeps an open console page current. When the console's stream (/live) says something
// may have changed, the page is asked for again and each of its live regions brought up to
// date: a region marked "replace" takes the new content (keeping the focused control
// focused), one marked "add" (the drafts waiting) only gains new items and notes on the
// ones that changed or went, so nothing the owner is reading changes under their eyes.
// Without this script the page is the same, and a reload shows the news.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live-page]");
  var news = document.getElementById("live-news");
  if (!main || !news || typeof window.EventSource !== "function") {
    return;
  }
  var page = main.getAttribute("data-live-page");
  var busy = false;
  var again = false;
  var source = new window.EventSource("/live");
  // Once on every (re)connection as well: what changed between the page being drawn (or the
  // stream breaking) and the stream opening is news no event will tell of.
  source.addEventListener("open", refresh);
  source.addEventListener("changed", refresh);
  source.addEventListener("ended", function () {
    source.close();
  });
  window.addEventListener("pagehide", function () {
    source.close();
  });

  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    window
      .fetch(page, {
        credentials: "same-origin",
        redirect: "error",
        headers: { Accept: "text/html" },
      })
      .then(function (answer) {
        if (!answer.ok) {
          throw new Error("status " + answer.status);
        }
        return answer.text();
      })
      .then(function (text) {
        bring(new window.DOMParser().parseFromString(text, "text/html"));
      })
      .catch(function () {
        // A page that cannot be had now stays as it is; the next change tries again.
      })
      .then(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  function bring(fresh) {
    var said = [];
    document.querySelectorAll("[data-live-region]").forEach(function (region) {
      var next = fresh.getElementById(region.id);
      if (!next) {
        return;
      }
      if (region.getAttribute("data-live-region") === "add" && items(region).length > 0) {
        add(region, next, said);
      } else if (region.innerHTML !== next.innerHTML) {
        replace(region, next);
        said.push(news.getAttribute("data-updated"));
      }
    });
    if (said.length > 0) {
      announce(said.join(" "));
    }
  }

  function items(root) {
    return Array.prototype.slice.call(root.querySelectorAll("[data-live-item]"));
  }

  function add(region, next, said) {
    var fresh = {};
    items(next).forEach(function (item) {
      fresh[item.id] = item;
    });
    items(region).forEach(function (item) {
      var now = fresh[item.id];
      if (!now) {
        note(item, news.getAttribute("data-gone"), said);
      } else if (now.getAttribute("data-live-item") !== item.getAttribute("data-live-item")) {
        note(item, news.getAttribute("data-changed"), said);
      }
    });
    var added = false;
    items(next).forEach(function (item) {
      if (!document.getElementById(item.id)) {
        region.appendChild(document.importNode(item, true));
        added = true;
      }
    });
    if (added) {
      said.push(news.getAttribute("data-updated"));
    }
  }

  function note(item, text, said) {
    var shown = item.querySelector(".live-note");
    if (shown && shown.textContent === text) {
      return;
    }
    if (!shown) {
      shown = document.createElement("p");
      shown.className = "notice live-note";
      var title = item.querySelector("h2");
      item.insertBefore(shown, title ? title.nextSibling : item.firstChild);
    }
    shown.textContent = text;
    said.push(text);
  }

  function replace(region, next) {
    var focused = document.activeElement;
    var where = focused && region.contains(focused) ? place(region, focused) : null;
    var nodes = Array.prototype.map.call(next.childNodes, function (node) {
      return document.importNode(node, true);
    });
    region.replaceChildren.apply(region, nodes);
    if (where) {
      var holder = document.getElementById(where.id);
      var same = holder ? focusable(holder)[where.index] : null;
      if (same) {
        same.focus();
      }
    }
  }

  function place(region, element) {
    var holder = element.closest("[id]");
    if (!holder || !region.contains(holder)) {
      holder = region;
    }
    return { id: holder.id, index: focusable(holder).indexOf(element) };
  }

  function focusable(root) {
    var found = root.querySelectorAll("a[href], button, input, select, textarea, [tabindex]");
    return Array.prototype.slice.call(found);
  }

  function announce(text) {
    news.textContent = "";
    window.setTimeout(function () {
      news.textContent = text;
    }, 100);
  }
})();
