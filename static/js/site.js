/* Small progressive enhancements; every page works without them.
   - The composer's live counter: a textarea[data-maxchars] counts down in its help text
     (<id>_helptext, which its aria-describedby names) and says how many characters are over,
     in the page's language: the server renders the texts into the textarea's data-left-one,
     data-left-other, data-over-one and data-over-other (%(num)s the count, %(max)s the limit);
     the form's submit button is disabled while the text is over the limit.
   - Exact times (the title of each <time datetime>, the permalink's date) in the reader's
     own time zone instead of the server's.
   - Live pages, for a reader (the header's data-live: where the streaming API is; its
     data-* the words): the notification count grows as notifications arrive, and home and
     the timeline say "3 new posts" in their .new-posts bar (a button that loads the list's
     first page). An unreachable stream changes nothing on the page: it is tried again,
     later and later.
   - Like, Repost, Follow, Mute and Block (after a confirm) act in place: the form is sent by
     fetch with its CSRF field, asking for JSON (social/answers.py), and the button becomes
     what the answer says; a refusal is said beside it. */
(function () {
  "use strict";

  // Count as the server does (social/forms.py PostForm): line breaks become one space, the
  // ends are trimmed, and a character is a code point (an emoji is one, not two).
  function length(text) {
    return Array.from(text.replace(/[\r\n]+/g, " ").trim()).length;
  }

  // The translated text for count: data-<name>-one for 1, data-<name>-other otherwise
  // (English fallbacks when a page has no such attribute).
  function say(textarea, name, count, max, one, other) {
    var text = textarea.getAttribute("data-" + name + (count === 1 ? "-one" : "-other")) ||
      (count === 1 ? one : other);
    return text.replace("%(num)s", String(count)).replace("%(max)s", String(max));
  }

  function counter(textarea) {
    var max = parseInt(textarea.getAttribute("data-maxchars"), 10);
    var help = document.getElementById(textarea.id + "_helptext");
    if (!max || !help) {
      return;
    }
    var blank = help.textContent;
    // Post (or Reply) is disabled while the text is over the limit; the help text, which
    // the button names in its aria-describedby, says by how much.
    var button = textarea.form && textarea.form.querySelector("button[type=submit]");
    if (button) {
      button.setAttribute("aria-describedby", help.id);
    }
    // The server's own message about this text (a refused post shown again): until the
    // text changes the counter does not say it a second time; then it is out of date.
    var refused = document.getElementById(textarea.id + "_error");
    var shown = textarea.value;
    // Screen readers hear the count when typing pauses, and only near or over the limit.
    var live = document.createElement("span");
    live.className = "visually-hidden";
    live.setAttribute("aria-live", "polite");
    help.parentNode.insertBefore(live, help.nextSibling);
    var timer = 0;

    function update() {
      var used = length(textarea.value);
      var left = max - used;
      var text = blank;
      if (used && left >= 0) {
        text = say(textarea, "left", left, max, "%(num)s character left", "%(num)s characters left");
      } else if (left < 0) {
        text = say(textarea, "over", -left, max, "%(num)s character over the %(max)s limit",
          "%(num)s characters over the %(max)s limit");
      }
      if (refused && textarea.value !== shown) {
        var named = (textarea.getAttribute("aria-describedby") || "").split(" ");
        textarea.setAttribute("aria-describedby", named.filter(function (id) {
          return id && id !== refused.id;
        }).join(" "));
        refused.parentNode.removeChild(refused);
        refused = null;
      }
      help.textContent = refused ? blank : text;
      if (button) {
        button.disabled = left < 0;
      }
      help.classList.toggle("near", left >= 0 && left <= 20 && used > 0);
      help.classList.toggle("over", left < 0);
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        live.textContent = used && left <= 20 && !refused ? text : "";
      }, 600);
    }

    textarea.addEventListener("input", update);
    if (textarea.value) {
      update();
    }
  }

  function localTimes() {
    var format;
    try {
      format = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
        year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", timeZoneName: "short",
      });
    } catch (error) {
      return;
    }
    var times = document.querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var time = times[i];
      var when = new Date(time.getAttribute("datetime"));
      if (isNaN(when.getTime())) {
        continue;
      }
      var local = format.format(when);
      if (time.title) {
        time.title = local;
      }
      var exact = time.classList.contains("exact") ? time : time.querySelector(".exact");
      if (exact) {
        exact.textContent = local;
      }
    }
  }


  // --- Live pages ------------------------------------------------------------------------

  function plural(element, name, count) {
    var text = element.getAttribute("data-" + name + (count === 1 ? "-one" : "-other")) || "";
    return text.replace("%(num)s", count.toLocaleString(document.documentElement.lang || undefined));
  }

  // An EventSource to url (by the auth cookie) that comes back after an error, waiting 2 s,
  // 4 s... up to 5 minutes (and a little at random, so many pages do not return at once).
  // While it listens, the header says so (data-listening: how many streams are open).
  function listen(url, handlers) {
    var wait = 2000;
    var header = document.querySelector(".topbar");
    var opened = false;
    function mark(up) {
      if (up !== opened) {
        opened = up;
        var now = (parseInt(header.getAttribute("data-listening"), 10) || 0) + (up ? 1 : -1);
        header.setAttribute("data-listening", String(now));
      }
    }
    function open() {
      var source;
      try {
        source = new EventSource(url, { withCredentials: true });
      } catch (error) {
        return;
      }
      source.addEventListener("open", function () {
        wait = 2000;
        mark(true);
      });
      Object.keys(handlers).forEach(function (name) {
        source.addEventListener(name, function (event) {
          var data;
          try {
            data = JSON.parse(event.data);
          } catch (error) {
            return;
          }
          handlers[name](data);
        });
      });
      source.addEventListener("error", function () {
        mark(false);
        source.close();
        window.setTimeout(open, wait + Math.random() * 1000);
        wait = Math.min(wait * 2, 300000);
      });
    }
    open();
  }

  // The navigation's notification count, one more for each notification heard.
  function noteCounter(header) {
    var link = header.querySelector("a.notes");
    if (!link) {
      return function () {};
    }
    var badge = link.querySelector(".count-badge");
    var count = badge ? parseInt(badge.textContent, 10) || 0 : 0;
    return function () {
      count += 1;
      if (!badge) {
        badge = document.createElement("span");
        badge.className = "count-badge";
        link.appendChild(document.createTextNode(" "));
        link.appendChild(badge);
      }
      badge.textContent = count < 100 ? String(count) : "99+";
      var hidden = document.createElement("span");
      hidden.className = "visually-hidden";
      hidden.textContent = " " + (header.getAttribute("data-notes-new") || "");
      badge.appendChild(hidden);
      link.title = plural(header, "notes", count);
      announce(plural(header, "notes", count));
    };
  }

  // One polite live region for what is heard (the new count of notifications).
  var region = null;
  function announce(text) {
    if (!region) {
      region = document.createElement("div");
      region.className = "visually-hidden";
      region.setAttribute("aria-live", "polite");
      document.body.appendChild(region);
    }
    region.textContent = text;
  }

  // The .new-posts bar: a button saying how many posts arrived since the page was shown,
  // in the header's words; it loads the list's first page.
  function newPosts(header, bar) {
    var seen = {};
    var count = 0;
    var button = null;
    return function (status) {
      if (!status || !status.id || seen[status.id]) {
        return;
      }
      seen[status.id] = true;
      count += 1;
      if (!button) {
        button = document.createElement("button");
        button.type = "button";
        button.className = "new-posts-button";
        button.addEventListener("click", function () {
          window.location.assign(window.location.pathname);
        });
        bar.appendChild(button);
      }
      button.textContent = plural(header, "posts", count) || String(count);
    };
  }

  function live(header) {
    var base = header.getAttribute("data-live");
    if (!base || typeof window.EventSource !== "function") {
      return;
    }
    var notified = noteCounter(header);
    var bar = document.querySelector(".new-posts[data-stream]");
    var stream = bar ? bar.getAttribute("data-stream") : "";
    if (stream === "user") {  // home: its posts and the notifications on one connection
      listen(base + "/user", { update: newPosts(header, bar), notification: notified });
      return;
    }
    listen(base + "/user/notification", { notification: notified });
    if (stream === "public") {
      listen(base + "/public", { update: newPosts(header, bar) });
    }
  }


  // --- Actions in place ------------------------------------------------------------------

  // Which action a form's URL names (…/like/, /unfollow/…), or "".
  var ACTION = /\/(un)?(like|repost|follow|mute|block)\/$/;
  function actionOf(url) {
    var found;
    try {
      found = ACTION.exec(new URL(url, window.location.href).pathname);
    } catch (error) {
      return "";
    }
    return found ? found[2] : "";
  }

  // Say text beside the control (a polite status), as an error or not.
  function note(control, text, failed) {
    var place = control.closest(".post-foot, .profile-actions, .entry, form") || control.parentNode;
    var said = place.querySelector(".live-note");
    if (!said) {
      said = document.createElement("span");
      said.className = "live-note";
      said.setAttribute("role", "status");
      place.appendChild(said);
    }
    said.classList.toggle("error", Boolean(failed));
    said.textContent = text;
  }

  // The control as the server's answer says it is now (social/answers.py).
  function become(button, form, kind, control) {
    if (!control || !control.action) {
      return;
    }
    if (form.id === "card-actions") {
      button.setAttribute("formaction", control.action);
    } else {
      form.setAttribute("action", control.action);
    }
    var label = button.querySelector(".label");
    var named = !label && button.textContent.indexOf("@") >= 0;  // "Mute @name" in a menu
    (label || button).textContent = named && control.name ? control.name : control.label;
    if (button.hasAttribute("aria-label") && control.name) {
      button.setAttribute("aria-label", control.name);
    }
    if (control.title) {
      button.title = control.title;
    } else if (control.name) {
      button.title = control.name;
    }
    if (button.hasAttribute("aria-pressed")) {
      button.setAttribute("aria-pressed", control.pressed ? "true" : "false");
    }
    if (kind === "like" || kind === "repost") {
      button.classList.toggle(kind === "like" ? "liked" : "reposted", control.pressed);
      var glyph = button.querySelector("[aria-hidden]");
      if (glyph && kind === "like") {
        glyph.textContent = control.pressed ? "\u2665" : "\u2661";
      }
      count(button, kind === "like" ? "likes" : "reposts", control);
    } else if (kind === "follow" && !button.classList.contains("small")) {
      button.classList.toggle("secondary", control.pressed);
    }
  }

  // The like or repost count beside the button: shown when there is one, else gone.
  function count(button, name, control) {
    var holder = button.parentNode;
    var shown = holder.querySelector("." + name);
    if (!control.count) {
      if (shown) {
        holder.removeChild(shown);
      }
      return;
    }
    if (!shown) {
      shown = document.createElement("span");
      shown.className = name;
      holder.appendChild(document.createTextNode(" "));
      holder.appendChild(shown);
    }
    shown.textContent = control.count.toLocaleString("en-US");
    shown.title = control.count_title || "";
  }

  // POST the form's fields (its CSRF field, `next`) to url, asking for JSON; then done(answer)
  // or the refusal said beside the control.
  function send(url, fields, control, done) {
    var failed = document.querySelector(".topbar").getAttribute("data-failed") || "";
    if (control.getAttribute("aria-busy") === "true") {
      return;  // sent already; not disabled, which would take the keyboard's focus away
    }
    control.setAttribute("aria-busy", "true");
    fetch(url, {
      method: "POST",
      body: fields,
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    }).then(function (response) {
      return response.json().catch(function () {
        return null;
      });
    }).then(function (answer) {
      if (answer && answer.ok) {
        done(answer.control);
        if (answer.message) {
          note(control, answer.message, false);
        }
      } else {
        note(control, (answer && answer.message) || failed, true);
      }
    }).catch(function () {
      note(control, failed, true);
    }).then(function () {
      control.removeAttribute("aria-busy");
    });
  }

  function onSubmit(event) {
    var form = event.target;
    var button = event.submitter;
    if (!button || event.defaultPrevented || !window.fetch || !window.FormData) {
      return;
    }
    var url = button.getAttribute("formaction") || form.getAttribute("action") || "";
    var kind = actionOf(url);
    if (!kind || kind === "block" && !button.closest(".profile-actions")) {
      return;  // Block asks first: its own page's form goes as it is
    }
    event.preventDefault();
    send(url, new FormData(form), button, function (control) {
      become(button, form, kind, control);
    });
  }

  // "Block @name" on a profile: a confirm (what a block does), then the block, in place: the
  // profile's main button becomes Unblock. Without a CSRF field it goes to the page that asks.
  function onClick(event) {
    var link = event.target.closest && event.target.closest("a[data-confirm]");
    var token = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (!link || !token || !window.fetch || !window.FormData || actionOf(link.href) !== "block") {
      return;
    }
    event.preventDefault();
    if (!window.confirm(link.getAttribute("data-confirm"))) {
      return;
    }
    var fields = new FormData();
    fields.append("csrfmiddlewaretoken", token.value);
    var main = document.querySelector(".profile-actions > form");
    send(link.href, fields, link, function (control) {
      var menu = link.closest("details");
      if (menu) {
        menu.open = false;
      }
      if (main && main.querySelector("button")) {
        become(main.querySelector("button"), main, "follow", control);
        main.querySelector("button").focus();
      }
      link.parentNode.removeChild(link);
    });
  }

  function start() {
    var areas = document.querySelectorAll("textarea[data-maxchars]");
    for (var i = 0; i < areas.length; i++) {
      counter(areas[i]);
    }
    localTimes();
    var header = document.querySelector(".topbar[data-live]");
    if (header) {
      live(header);
      document.addEventListener("submit", onSubmit);
      document.addEventListener("click", onClick);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
