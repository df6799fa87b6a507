/* Small progressive enhancements; every page works without them.
   - The composer's live counter: a textarea[data-maxchars] counts down in its help text
     (<id>_helptext, which its aria-describedby names) and says how many characters are over,
     in the page's language: the server renders the texts into the textarea's data-left-one,
     data-left-other, data-over-one and data-over-other (%(num)s the count, %(max)s the limit);
     the form's submit button is disabled while the text is over the limit.
   - Exact times (the title of each <time datetime>, the permalink's date) in the reader's
     own time zone instead of the server's. */
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

  function start() {
    var areas = document.querySelectorAll("textarea[data-maxchars]");
    for (var i = 0; i < areas.length; i++) {
      counter(areas[i]);
    }
    localTimes();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
