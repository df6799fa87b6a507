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
     the timeline say "3 new posts" in their .new-posts bar (a button that puts them above
     the list, the page and its composer left as they are). An unreachable stream changes nothing on the page: it is tried again,
     later and later.
   - Like, Repost, Follow, Mute and Block (after a confirm) act in place: the form is sent by
     fetch with its CSRF field, asking for JSON (social/answers.py), and the button becomes
     what the answer says; a refusal is said beside it. A mute changes every card of the
     account; a follow, the profile's count.
   - A post's pictures open in a viewer (a dialog: Esc, arrow keys, the description shown).
   - The composer's text survives a reload the page makes (keepDraft). */
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
  // in the header's words. Pressed, it reads the list's first page and puts the posts this
  // page lacks above the others, without leaving the page: the composer keeps whatever is
  // being written, pictures chosen included. Past the first page (or if that read fails)
  // it loads the first page instead, keeping the composer's text (keepDraft).
  function newPosts(header, bar) {
    var seen = {};
    var count = 0;
    var button = null;
    function shown() {
      count = 0;
      if (button) {
        bar.removeChild(button);
        button = null;
      }
    }
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
          showNewPosts(header, bar, button, shown);
        });
        bar.appendChild(button);
      }
      button.textContent = plural(header, "posts", count) || String(count);
    };
  }

  // The cards of a list (posts, and posts folded in a <details>) that follow its bar.
  function cardsAfter(bar) {
    var cards = [];
    for (var node = bar.nextElementSibling; node; node = node.nextElementSibling) {
      if (node.matches("article.post, details.folded")) {
        cards.push(node);
      }
    }
    return cards;
  }

  function cardId(card) {
    var article = card.matches("article") ? card : card.querySelector("article.post");
    return article ? article.id : "";
  }

  function reloadFirstPage(header) {
    var form = document.querySelector("form.compose");
    var files = form ? Array.prototype.some.call(form.querySelectorAll("input[type=file]"),
      function (input) { return input.files && input.files.length; }) : false;
    if (files && !window.confirm(header.getAttribute("data-drop-pictures") || "")) {
      return;
    }
    keepDraft();
    window.location.assign(window.location.pathname);
  }

  function showNewPosts(header, bar, button, done) {
    var page = parseInt(new URLSearchParams(window.location.search).get("page"), 10) || 1;
    if (page > 1 || !window.fetch || !window.DOMParser) {
      reloadFirstPage(header);
      return;
    }
    if (button.getAttribute("aria-busy") === "true") {
      return;
    }
    button.setAttribute("aria-busy", "true");
    fetch(window.location.pathname, { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) {
        throw new Error(String(response.status));
      }
      return response.text();
    }).then(function (html) {
      var fetched = new DOMParser().parseFromString(html, "text/html");
      var theirBar = fetched.querySelector(".new-posts[data-stream]");
      if (!theirBar) {
        throw new Error("no list");
      }
      var present = {};
      cardsAfter(bar).forEach(function (card) {
        present[cardId(card)] = true;
      });
      // The newest first, down to the first post this page shows already.
      var fresh = [];
      var theirs = cardsAfter(theirBar);
      for (var i = 0; i < theirs.length && !present[cardId(theirs[i])]; i++) {
        fresh.push(document.importNode(theirs[i], true));
      }
      if (!document.getElementById("card-actions")) {  // a page that had no cards
        var actions = fetched.getElementById("card-actions");
        if (actions) {
          document.body.appendChild(document.importNode(actions, true));
        }
      }
      var first = cardsAfter(bar)[0] || null;
      var empty = bar.parentNode.querySelectorAll(":scope > p.empty");
      for (var e = 0; e < empty.length && fresh.length; e++) {
        empty[e].parentNode.removeChild(empty[e]);
      }
      fresh.forEach(function (card) {
        bar.parentNode.insertBefore(card, first);
      });
      done();
      localTimes();
      if (fresh.length) {  // read on from the newest (the bar that had the focus is gone)
        var article = fresh[0].matches("article") ? fresh[0] : fresh[0].querySelector("article");
        article.setAttribute("tabindex", "-1");
        article.focus();
      }
    }).catch(function () {
      button.removeAttribute("aria-busy");
      reloadFirstPage(header);
    });
  }

  // The composer's text (and content warning) kept for the next page of this address in
  // this tab, when the page must be left: restored once into an empty composer.
  var DRAFT = "retwis-draft:";
  function keepDraft() {
    var form = document.querySelector("form.compose");
    if (!form || !window.sessionStorage) {
      return;
    }
    var kept = {};
    ["status", "spoiler_text"].forEach(function (name) {
      var field = form.elements[name];
      if (field && field.value) {
        kept[name] = field.value;
      }
    });
    try {
      if (Object.keys(kept).length) {
        window.sessionStorage.setItem(DRAFT + window.location.pathname, JSON.stringify(kept));
      }
    } catch (error) {
      // storage full or refused: nothing kept, as before
    }
  }

  function restoreDraft() {
    var form = document.querySelector("form.compose");
    var key = DRAFT + window.location.pathname;
    var kept = null;
    try {
      kept = window.sessionStorage && JSON.parse(window.sessionStorage.getItem(key) || "null");
      if (kept) {
        window.sessionStorage.removeItem(key);
      }
    } catch (error) {
      return;
    }
    if (!form || !kept) {
      return;
    }
    Object.keys(kept).forEach(function (name) {
      var field = form.elements[name];
      if (field && !field.value && typeof kept[name] === "string") {
        field.value = kept[name];
        field.dispatchEvent(new Event("input"));
        if (name === "spoiler_text") {
          var extra = field.closest("details");
          if (extra) {
            extra.open = true;
          }
        }
      }
    });
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

  // POST the form's fields (its CSRF field, `next`) to url, asking for JSON; then
  // done(answer's control), and the answer's message said beside the control, or beside
  // what done returns (an element still on the page); or the refusal said beside it.
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
        var beside = done(answer.control) || control;
        if (answer.message) {
          note(beside, answer.message, false);
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
      if (kind === "mute") {
        muteEverywhere(url, button, control);
      }
      become(button, form, kind, control);
      if (kind === "follow" && control.count_html && button.closest(".profile-head")) {
        followers(control.count_html);  // the profile's own account, not a list's row
      }
    });
  }

  // A mute or unmute (url: its URL before the answer) as every control on the page naming
  // that account says it now: the author's other cards' Mute and the profile's menu item.
  // Muting folds away the author's other cards (not the one pressed, which says so and
  // offers Unmute), as the next page would leave them out; unmuting shows them again. On
  // the author's own profile their cards stay, as the server shows them there.
  function muteEverywhere(url, pressed, control) {
    var own = document.querySelector(".profile-actions form[action='" + url + "']");
    var buttons = document.querySelectorAll("button.mute[formaction='" + url + "']");
    Array.prototype.forEach.call(buttons, function (button) {
      if (button === pressed) {
        return;
      }
      become(button, document.getElementById("card-actions"), "mute", control);
      var card = button.closest("article.post");
      var folded = card && card.parentNode.matches("details.folded") ? card.parentNode : card;
      if (folded && control.pressed && !own) {
        folded.hidden = true;
        folded.setAttribute("data-muted-here", "");
      }
    });
    if (!control.pressed) {
      var hidden = document.querySelectorAll("[data-muted-here]");
      Array.prototype.forEach.call(hidden, function (card) {
        if (card.querySelector("button.mute[formaction='" + control.action + "']")) {
          card.hidden = false;
          card.removeAttribute("data-muted-here");
        }
      });
    }
    if (own && own.querySelector("button") !== pressed) {
      become(own.querySelector("button"), own, "mute", control);
    }
  }

  // The profile's followers count after a follow or unfollow in place (the server's
  // words: "<strong>2</strong> followers", escaped there).
  function followers(html) {
    var link = document.querySelector(".profile-head .counts a.followers");
    if (link) {
      var words = document.createElement("template");
      words.innerHTML = html;
      link.replaceChildren(words.content);
    }
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
      var button = main && main.querySelector("button");
      if (button) {
        become(button, main, "follow", control);
        button.focus();
      }
      var actions = link.closest(".profile-actions");
      link.parentNode.removeChild(link);  // the note goes beside what stays
      return button || actions;
    });
  }

  // --- The picture viewer -----------------------------------------------------------------

  // A post's picture, clicked, opens in a dialog over the page (the footer's
  // template#picture-viewer, in the page's language) at its full size with its
  // description shown; Previous and Next (and the arrow keys) go through the post's
  // pictures, Esc or Close returns to the picture's link. Without the script, or with a
  // modifier key (a new tab), the link opens the file itself.
  function viewer() {
    var made = document.getElementById("picture-viewer-dialog");
    var template = document.getElementById("picture-viewer");
    if (made || !template || typeof HTMLDialogElement !== "function") {
      return made;
    }
    made = document.importNode(template.content, true).querySelector("dialog");
    made.id = "picture-viewer-dialog";
    document.body.appendChild(made);
    return made;
  }

  function openPictures(link) {
    var dialog = viewer();
    if (!dialog) {
      return false;
    }
    var links = Array.prototype.slice.call(link.closest(".media-grid").querySelectorAll("a.media-item"));
    var at = links.indexOf(link);
    var img = dialog.querySelector(".viewer-picture");
    var said = dialog.querySelector(".viewer-alt");
    var position = dialog.querySelector(".viewer-position");
    var file = dialog.querySelector(".viewer-file");
    var previous = dialog.querySelector(".viewer-previous");
    var next = dialog.querySelector(".viewer-next");

    function show(index) {
      at = (index + links.length) % links.length;
      var thumb = links[at].querySelector("img");
      var alt = thumb ? thumb.getAttribute("alt") || "" : "";
      img.src = links[at].href;
      img.alt = alt;
      said.textContent = alt;
      file.href = links[at].href;
      position.textContent = (position.getAttribute("data-of") || "%(num)s / %(total)s")
        .replace("%(num)s", String(at + 1)).replace("%(total)s", String(links.length));
      previous.hidden = next.hidden = position.hidden = links.length < 2;
    }

    function key(event) {
      if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        var forward = (event.key === "ArrowRight") !== (getComputedStyle(dialog).direction === "rtl");
        show(at + (forward ? 1 : -1));
        event.preventDefault();
      }
    }
    function step(by) {
      return function () { show(at + by); };
    }
    function backdrop(event) {
      if (event.target === dialog) {  // the dim area around the picture
        dialog.close();
      }
    }
    var back = step(-1);
    var forth = step(1);
    function closed() {
      dialog.removeEventListener("keydown", key);
      dialog.removeEventListener("click", backdrop);
      dialog.removeEventListener("close", closed);
      previous.removeEventListener("click", back);
      next.removeEventListener("click", forth);
      img.removeAttribute("src");
      links[at].focus();  // back where the reader was (the picture they last saw)
    }
    dialog.addEventListener("keydown", key);
    dialog.addEventListener("click", backdrop);
    dialog.addEventListener("close", closed);
    previous.addEventListener("click", back);
    next.addEventListener("click", forth);
    dialog.querySelector(".viewer-close").onclick = function () { dialog.close(); };
    show(at);
    dialog.showModal();
    return true;
  }

  function onPictureClick(event) {
    var link = event.target.closest && event.target.closest(".media-grid a.media-item");
    if (!link || event.defaultPrevented || event.button !== 0 || event.ctrlKey ||
        event.metaKey || event.shiftKey || event.altKey) {
      return;
    }
    if (openPictures(link)) {
      event.preventDefault();
    }
  }

  function start() {
    restoreDraft();
    var areas = document.querySelectorAll("textarea[data-maxchars]");
    for (var i = 0; i < areas.length; i++) {
      counter(areas[i]);
    }
    localTimes();
    document.addEventListener("click", onPictureClick);
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
