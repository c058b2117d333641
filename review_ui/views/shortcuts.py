"""The queue's keyboard: the help overlay, and every key of the queue.

J, K, N and P are also Streamlit button shortcuts (their buttons show the key),
but a small script of our own (`keys_script`) reads them first, with A, R, E and
?, because Streamlit's handler loses a press made while the page is being drawn
(its button is not painted yet) and reserves R (its "rerun"). The script is a
fixed string: no text from an article, a feed, a model or the database is ever
put into it (only the dwell time, an integer). It acts only on the queue, when
the focus is not in a text box and no Ctrl/Cmd/Alt is held.

It decides nothing by itself. J, K, N, P and ? click their button; R moves the
cursor to the reason box, E opens the edit box with the cursor in the summary. A
press made while the page is still being drawn waits and is applied, in order,
once it has settled, or is reported on screen: no press is lost in silence. A
and Enter in the reason box never wait: they are refused in the browser, with a
message naming the item, when the draft had not been on screen for `[review]
dwell_seconds`, and every decision is checked again on the server, the dwell
rule included.

After a filter is used, `refocus_queue` takes the cursor out of the sidebar box,
so J and K work straight away instead of typing into the search field.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import streamlit as st
from sqlalchemy.engine import Engine
from sqlmodel import Session

from review_ui import streamlit_adapter
from review_ui.desk.queries import PAGE_SIZE, QueueFilter, queue_page, queue_position

OPEN = "open_id"  # views.queue.OPEN: the item on screen
REFOCUS = "q_refocus"  # bumped by a filter change: the next run blurs the sidebar box

# (key, what it does), in the order the help lists them.
SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("J", "next draft in the queue"),
    ("K", "previous draft in the queue"),
    ("A", "approve the draft on screen (once it has been in view for a moment)"),
    ("Y", "approve a flagged draft anyway, after A has shown what is wrong with it"),
    ("R", "reject: puts the cursor in the reason box; type or pick a reason, then Enter"),
    ("1-9", "a preset reason (listed below) in the reason box: R, a number, Enter rejects"),
    ("E", "edit: opens the edit box with the cursor in the summary"),
    ("N", "next page of the list (opens its first draft)"),
    ("P", "previous page of the list (opens its first draft)"),
    ("?", "this list of shortcuts"),
    ("Enter", "in the reason box: reject with that reason"),
    ("Esc", "close this list"),
)

# Our own script (see the module docstring). Streamlit's names for parts of the
# page (__APP__, __KEY_CLASS__...) are put in from review_ui/streamlit_adapter.py,
# the one place that knows them. Installed once per page: a listener in
# the capture phase, so R reaches us before Streamlit's "rerun" key. The only value
# put into it is the dwell time, an integer of milliseconds.
#
# A and Enter in the reason box decide, so they are measured here, in the browser,
# against the moment the key was physically pressed (event.timeStamp), not against
# when the server receives the click: a busy browser or a page run still drawing
# the next draft used to deliver a second press made 150 ms after the first as a
# press on the next draft, which the server then thought had been up for over a
# second. The draft on screen is the one named by the marker drawn last on the
# page (`draft_marker`, id and version only); the moment it appeared is taken
# just before the browser paints it. A press made before that draft had been on
# screen for DWELL_MS is refused here, with a message naming the item, and no
# click is sent; otherwise the script clicks the Approve button of that very
# draft (its key carries the id and version). The server still checks the dwell.
_KEYS_TEMPLATE = streamlit_adapter.fill("""<script>
(() => {
  if (window.__copydeskKeys) return;
  window.__copydeskKeys = true;
  const DWELL_MS = __DWELL_MS__;
  const typing = (el) => el && (el.isContentEditable ||
    ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
  // The edit box may still be opening: try again until the cursor is in it.
  const focusSoon = (find, tries) => {
    const el = find();
    if (el) { el.focus(); el.scrollIntoView({block: "center"}); }
    if ((!el || document.activeElement !== el) && tries > 0) {
      setTimeout(() => focusSoon(find, tries - 1), 50);
    }
  };
  // The draft on screen: "id_version" from the single marker, or null while a
  // page run is drawing (two markers, or none).
  const onScreen = () => {
    const marks = document.querySelectorAll("span.cd-draft");
    if (marks.length !== 1) return null;
    const m = marks[0].className.match(/cd-draft-([0-9]+)-([0-9]+)/);
    return m ? m[1] + "_" + m[2] : null;
  };
  // The address names the draft on screen as soon as it is drawn, so a reload or
  // a copied link comes back to it (the server writes it too, a run later). Only
  // the item=: every other part of the address stays as Streamlit wrote it.
  const keepInAddress = (id) => {
    const url = new URL(window.location.href);
    if (url.searchParams.get("item") === id) return;
    url.searchParams.set("item", id);
    window.history.replaceState(window.history.state, "", url);
  };
  // "Seen" means in view: the draft's text and its checks summary inside the
  // viewport (an IntersectionObserver; a text taller than the screen counts when
  // it fills half of it). `since` is when both last came into view, Infinity
  // while either is out of view; `body[data-cd-seen]` names the draft once it has
  // been in view for DWELL_MS (tests and the bench wait on it, never on a clock).
  // A page run on the same draft (the address it writes costs one) counts the time
  // again from its end, as the server does: `settledAt`.
  let shown = null, since = Infinity, sent = null, settledAt = 0, running = false;
  const inView = new Map();  // element -> in view
  const visibility = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const tall = e.intersectionRect.height >= 0.5 * window.innerHeight;
      inView.set(e.target, e.isIntersecting && (e.intersectionRatio >= 0.98 || tall));
    }
    const all = inView.size > 0 && [...inView.values()].every((v) => v);
    if (!all) since = Infinity;
    else if (since === Infinity) since = performance.now();
  }, {threshold: [0, 0.25, 0.5, 0.75, 0.98, 1]});
  const watched = () => [...document.querySelectorAll(".cd-draft-body, .cd-checks-summary")];
  // Streamlit may draw an element anew: the new one is taken as it was (the
  // observer corrects it at once if it is out of view).
  const observe = () => {
    const now = watched();
    if (now.length === inView.size && now.every((el) => inView.has(el))) return;
    const was = since !== Infinity;
    visibility.disconnect(); inView.clear();
    for (const el of now) { inView.set(el, was); visibility.observe(el); }
  };
  const from = () => Math.max(since, settledAt);
  const seenFor = () => since === Infinity || running ? -1 : performance.now() - from();
  const watch = () => {
    const now = onScreen();
    if (now === null) return;  // mid-run: two markers or none; the draft is unchanged
    if (now === shown) { observe(); return; }
    shown = now; since = Infinity; sent = null;
    visibility.disconnect(); inView.clear();
    if (now !== null) {
      observe();
      keepInAddress(now.split("_")[0]);
    }
  };
  new MutationObserver(() => { watch(); noteAnswers(); }).observe(document.body,
    {childList: true, subtree: true, attributes: true, attributeFilter: ["class"]});
  watch();
  // A refusal made here never reaches the server: say it on screen, naming the item.
  // It stays until the editor's next key press (never timed out unseen), or, with
  // `id` "cd-key-unanswered", until the page run it was waiting for comes.
  const say = (text, id = "cd-key-refusal") => {
    let box = document.getElementById(id);
    if (!box) {
      box = document.createElement("div");
      box.id = id;
      box.className = "cd-text";
      box.setAttribute("role", "alert");
      box.style.cssText = "position:fixed;top:3.5rem;right:1rem;z-index:1000;max-width:32rem;" +
        "padding:0.6rem 0.8rem;border-radius:6px;background:#fdecea;color:#611a15;" +
        "pointer-events:none";
      document.body.appendChild(box);
    }
    box.textContent = text;
  };
  const unsay = (id) => { const box = document.getElementById(id); if (box) box.remove(); };
  // A decision this script sent (a click on Approve or Approve anyway, or Enter in
  // the reason box) must be answered by a page run. One that no run answers within
  // ANSWER_MS was lost on the way (seen once under load: neither a decision nor a
  // refusal). It is said on screen, naming the item, and the key may be pressed
  // again (the server binds a decision to the draft's version: a late first press
  // and a second one make one decision at most).
  //
  // A press is matched to the run that answers it, never to any run: each gets an
  // id (this page's token and a counter), which rides in the page's address (the
  // last part of its path, PRESS_MARK) only while its own run request is sent, and
  // the server draws the id of the press that started a run into that run
  // (`answer_marker`, from review_ui/streamlit_adapter.py `press_id`). A press made
  // while a run is already in progress is answered by the run it starts, which
  // the page's run state cannot tell from the one before (it stays "running").
  // A browser test sets a shorter window before the page loads (tests/browser.py
  // `new_page(answer_ms=...)`), a clock of its own instead of a 10 s wait.
  const ANSWER_MS = Number(window.__copydeskAnswerMs) > 0 ?
    Number(window.__copydeskAnswerMs) : 10000;
  const PRESS_MARK = "__PRESS_MARK__";
  const TOKEN = Math.random().toString(36).slice(2, 10).replace(/[^a-z0-9]/g, "") || "p";
  let presses = 0;
  const answered = new Set();  // the press ids the server has drawn
  const noteAnswers = () => {
    for (const el of document.querySelectorAll("span.cd-answered")) {
      const m = el.className.match(/cd-answered-([a-z0-9]+)/);
      if (m) answered.add(m[1]);
    }
  };
  const unmarked = (path) => path.replace(new RegExp(PRESS_MARK + "[a-z0-9]+$"), "");
  const markAddress = (id) => {
    const url = new URL(window.location.href);
    const bare = unmarked(url.pathname);
    url.pathname = (bare.endsWith("/") ? bare : bare + "/") + (id ? PRESS_MARK + id : "");
    if (url.href !== window.location.href) {
      window.history.replaceState(window.history.state, "", url);
    }
  };
  // Streamlit sends a form's run request in the click handler itself, and a plain
  // button's from a zero-delay timer its handler sets: a timer set by a timer this
  // listener sets (it runs before the handler) comes after both.
  const stampPress = () => {
    const id = TOKEN + "n" + (presses += 1);
    markAddress(id);
    setTimeout(() => setTimeout(() => markAddress(null), 0), 0);
    return id;
  };
  let asked = null;  // {id, draft, what, at, label}: draft null for any other button
  const expectAnswer = (draft, what, label = null) => {
    unsay("cd-key-unanswered");
    asked = {id: stampPress(), draft, what, at: performance.now(), label};
  };
  // The same watch over a decision made with the mouse, and over every other
  // button and form submit on every view (this script stays once the queue has
  // installed it): each asks for a page run, and one that none answers is said,
  // naming the button, never lost in silence (the CI's Retract that got no answer).
  window.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button");
    if (!button || button.disabled) return;
    const approve = keyIn(button, "approve_") || keyIn(button, "approve_flagged_");
    const reject = keyIn(button, "reject_submit_");
    if (approve) expectAnswer(approve, "approved");
    else if (reject) expectAnswer(reject, "rejected");
    else if (button.closest('__BUTTON__, __FORM_SUBMIT__')) {
      expectAnswer(null, "done", (button.textContent || "").trim().slice(0, 80));
    }
  }, true);
  const checkAnswer = () => {
    if (asked === null) return;
    noteAnswers();
    if (answered.has(asked.id)) {
      unsay("cd-key-unanswered");
      asked = null;
      return;
    }
    if (asked.told || performance.now() - asked.at < ANSWER_MS) return;
    asked.told = true;
    const late = "got no answer from the server in " + ANSWER_MS / 1000 +
      " s (no page run answered it). ";
    if (asked.draft === null) {
      say("Not done yet: your press on \u201c" + asked.label + "\u201d " + late +
        "If it is still on screen, press it again.", "cd-key-unanswered");
      return;
    }
    if (sent === asked.draft) sent = null;
    say("Not " + asked.what + " yet: " + itemOf(asked.draft) + ": the press " + late +
      "If the draft is still on screen, press the key again.", "cd-key-unanswered");
  };
  // Why a decision key pressed at `pressed` on draft `key` must not count, or null.
  // With a dwell of 0 the rule is off, visibility included ([review] dwell_seconds).
  const tooSoon = (key, pressed) => {
    if (key === null || key !== shown || onScreen() === null) {
      return "the draft on screen is still being drawn";
    }
    if (DWELL_MS <= 0) return null;
    if (since === Infinity) {
      return "its text and checks are not in view; scroll back to them and read them first";
    }
    const seen = running ? 0 : pressed - from();
    if (!(seen >= DWELL_MS)) {
      const s = Math.max(0, seen) / 1000;
      return "it had been in view for only " + s.toFixed(1) + " s (at least " +
        DWELL_MS / 1000 + " s); read it first";
    }
    return null;
  };
  const itemOf = (key) => "#" + String(key || shown || "?").split("_")[0];
  const keyIn = (el, prefix) => {
    const box = el && el.closest('[class*="__KEY_CLASS__' + prefix + '"]');
    const m = box && box.className.match(new RegExp("__KEY_CLASS__" + prefix + "([0-9]+_[0-9]+)"));
    return m ? m[1] : null;
  };
  // J, K, N, P, ? click a button; R and E move the cursor into a box. A press
  // made while the page is still being drawn (a run in progress, or its buttons
  // not painted yet: the first queue page after signing in paints them up to two
  // seconds after the run ends) waits here, in order, and is applied once the
  // page has settled; one that cannot be applied within WAIT_MS is reported on
  // screen, never dropped in silence. After a click, the next waiting key waits
  // for the page that click asked for.
  //
  // The waiting keys are timed on a clock of their own, `keysNow`: the page's
  // (performance.now(), https://developer.mozilla.org/en-US/docs/Web/API/Performance/now)
  // plus `window.__copydeskKeysAhead` milliseconds, which only a browser test sets
  // (tests/browser.py `keys_clock_ahead`), to move that clock past WAIT_MS
  // instead of waiting 6 s for a key that cannot apply to be reported.
  const WAIT_MS = 6000;
  const keysNow = () => performance.now() + (Number(window.__copydeskKeysAhead) || 0);
  const BUTTONS = {j: "nav_next", k: "nav_prev", n: "page_next", p: "page_prev", "?": "keys_help"};
  const NAMES = {j: "J", k: "K", n: "N", p: "P", "?": "?", r: "R", e: "E"};
  const settled = () => {
    const app = document.querySelector('__APP__');
    return !app || app.getAttribute("__SCRIPT_STATE__") === "__NOT_RUNNING__";
  };
  const offQueue = () => settled() && !document.querySelector(".cd-queue-count") &&
    document.querySelector("h1") !== null;
  const reasonBox = () => document.querySelector('input[aria-label="Reason for rejecting"]');
  const editToggle = () => [...document.querySelectorAll("summary")]
    .find((s) => s.textContent.includes("Edit the draft"));
  // Is the page still painting the button of widget `name`? The first queue page
  // after signing in draws a widget's frame up to two seconds before its button.
  const painting = (name) => document.querySelector(".__KEY_CLASS__" + name) !== null;
  // "done", "clicked", "wait" (not there yet) or "none" (the page has settled
  // without it: a disabled button, such as K on the first draft, does nothing, as
  // a click would).
  const apply = (key) => {
    if (Object.hasOwn(BUTTONS, key)) {
      // A button clicked during a run would act on the page before it.
      if (!settled()) return "wait";
      const button = document.querySelector(".__KEY_CLASS__" + BUTTONS[key] + " button");
      if (!button) return painting(BUTTONS[key]) ? "wait" : "none";
      if (button.disabled) return "none";
      button.click();
      return "clicked";
    }
    // R and E act at once when their box is there, even during a run: what the
    // editor types next must land in the box, not be read as more keys.
    if (key === "r") {
      const box = reasonBox();
      if (!box) return onScreen() !== null || !settled() ? "wait" : "none";
      box.focus(); box.scrollIntoView({block: "center"});
      return "done";
    }
    const edit = editToggle();  // key === "e"
    if (!edit) return onScreen() !== null || !settled() ? "wait" : "none";
    const area = () => edit.parentElement.querySelector('textarea[aria-label="Summary"]');
    if (!edit.parentElement.open) edit.click();
    focusSoon(area, 40);
    return "done";
  };
  const waiting = [];  // [{key, at}], oldest first
  let clickedAt = null, sawRun = false;  // the last click, and whether its run began
  const flush = () => {
    if (clickedAt !== null) {
      if (!settled()) { sawRun = true; return; }
      // The run a click asks for starts after a round trip; 1.5 s without one:
      // the click asked for nothing (it happens with a button already gone).
      if (!sawRun && performance.now() - clickedAt < 1500) return;
      clickedAt = null;
    }
    while (waiting.length) {
      const next = waiting[0];
      const result = apply(next.key);
      if (result === "wait") {
        if (keysNow() - next.at < WAIT_MS) return;
        waiting.length = 0;
        say("Key " + NAMES[next.key] + " not applied: the page was still being drawn " +
          "after " + WAIT_MS / 1000 + " s. Press it again.");
        return;
      }
      waiting.shift();
      if (result === "clicked") { clickedAt = performance.now(); sawRun = false; return; }
    }
  };
  setInterval(() => {
    const settledNow = settled();
    if (running && settledNow) settledAt = performance.now();
    running = !settledNow;
    if (waiting.length || clickedAt !== null) flush();
    checkAnswer();
    restore();
    const seen = shown !== null && (DWELL_MS <= 0 || seenFor() >= DWELL_MS) ? shown : null;
    if (seen === null) delete document.body.dataset.cdSeen;
    else if (document.body.dataset.cdSeen !== seen) document.body.dataset.cdSeen = seen;
    // Off the queue (a settled page without the queue's count line; the lists of
    // decided items have a count line of their own) no draft is on screen:
    // forget the last one, or its id would be written into every other view's
    // address, and a link copied there would open it.
    if (settledNow && shown !== null && !document.querySelector(".cd-queue-count")) {
      shown = null; since = Infinity; sent = null;
      visibility.disconnect(); inView.clear();
    }
    // Streamlit rewrites the address from what the server last said (a widget bound
    // to it, such as the reason box, does): put the draft on screen back, once the
    // page has settled with it (a run leaving the queue still shows its marker).
    if (shown !== null && settledNow && onScreen() === shown) {
      keepInAddress(shown.split("_")[0]);
    }
  }, 50);
  // The preset reasons, from a hidden list the page draws (escaped text, read
  // here as text): a digit puts preset N into the reason box, as typed text.
  const presets = () =>
    [...document.querySelectorAll("ol.cd-presets li")].map((li) => li.textContent);
  const fill = (box, text) => {
    const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
    set.call(box, text);
    box.dispatchEvent(new Event("input", {bubbles: true}));
  };
  const preset = (digit, box) => {
    const text = presets()[Number(digit) - 1];
    if (text === undefined || !box) return false;
    box.focus(); fill(box, text);
    return true;
  };
  // An unsent reason stays in this browser tab only (sessionStorage), for this
  // editor and this draft: a reload brings it back; a shared link never carries it.
  const who = () => {
    const b = document.querySelector(".cd-who b");
    return b ? b.textContent : "";
  };
  const kept = (draft) => "cd-reason:" + who() + ":" + draft;
  document.addEventListener("input", (event) => {
    const box = event.target;
    if (!box.matches || !box.matches('input[aria-label="Reason for rejecting"]')) return;
    const draft = keyIn(box, "reason_");
    if (!draft) return;
    if (box.value) sessionStorage.setItem(kept(draft), box.value);
    else sessionStorage.removeItem(kept(draft));
  }, true);
  const restore = () => {
    const box = reasonBox();
    // The editor's name is part of the key: until the sidebar naming them is drawn
    // (later than the box on a busy machine), try again on the next tick.
    if (!box || box.dataset.cdRestored || !who()) return;
    box.dataset.cdRestored = "1";
    const draft = keyIn(box, "reason_");
    const value = draft && sessionStorage.getItem(kept(draft));
    if (value && box.value === "") fill(box, value);
  };
  window.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    if (!["Shift", "Control", "Alt", "Meta"].includes(key)) unsay("cd-key-refusal");
    const digit = /^[1-9]$/.test(key);
    if (digit && event.target.matches('input[aria-label="Reason for rejecting"]') &&
        event.target.value === "") {
      if (preset(key, event.target)) { event.preventDefault(); event.stopImmediatePropagation(); }
      return;
    }
    if (key === "Enter" && event.target.matches('input[aria-label="Reason for rejecting"]')) {
      const draft = keyIn(event.target, "reason_");
      const why = tooSoon(draft, event.timeStamp);
      if (why) {
        event.preventDefault(); event.stopImmediatePropagation();
        say("Not rejected: " + itemOf(draft) + ": " + why + ".");
      } else {
        expectAnswer(draft, "rejected");
      }
      return;
    }
    // Esc closes an open dialog (the shortcuts list) wherever the cursor is. The
    // dialog takes the cursor a moment after it appears (half a second on a busy
    // machine), and until then its own Esc handler never sees the key.
    if (key === "Escape") {
      const dialog = document.querySelector('__DIALOG__');
      const close = dialog && dialog.querySelector('__DIALOG_CLOSE__');
      if (close && !dialog.contains(event.target)) {
        event.preventDefault(); event.stopImmediatePropagation();
        close.click();
      }
      return;
    }
    if (typing(event.target)) return;
    // A and Y off the queue (a settled page with a view's own heading and no queue
    // count line: Published, Approved...): no draft is open there, say so plainly.
    if ("aAyY".includes(key) && key.length === 1 && !event.shiftKey && offQueue()) {
      event.preventDefault(); event.stopImmediatePropagation();
      if (!event.repeat) {
        say("Not approved: there is no draft on this page. A and Y approve the draft " +
          "open in the Review queue.");
      }
      return;
    }
    if ((key === "a" || key === "A") && !event.shiftKey) {
      event.preventDefault(); event.stopImmediatePropagation();
      if (event.repeat) return;
      const draft = shown;
      if (document.querySelector('[class*="__KEY_CLASS__viewer_"]')) {
        say("Not approved: " + itemOf(draft) + ": you are signed in as a viewer, and " +
          "viewers cannot decide.");
        return;
      }
      // Never ahead of a key still waiting for the page (R, say: the editor meant
      // to reject, and is typing the reason).
      const why = waiting.length ? "an earlier key is still waiting for the page" :
        tooSoon(draft, event.timeStamp);
      if (why) { say("Not approved: " + itemOf(draft) + ": " + why + "."); return; }
      if (document.querySelector(".__KEY_CLASS__approve_flagged_" + draft + " button")) {
        say("Not approved: " + itemOf(draft) + " is flagged: read what is wrong beside the " +
          "buttons, then press Y to approve it anyway.");
        return;
      }
      if (sent === draft) {  // already sent for this draft: one decision each
        say("Not approved again: " + itemOf(draft) + ": A was already pressed for it; " +
          "the next draft is on its way.");
        return;
      }
      const button = document.querySelector(".__KEY_CLASS__approve_" + draft + " button");
      if (!button) {
        say("Not approved: " + itemOf(draft) + ": its buttons are still being drawn; " +
          "press A again.");
        return;
      }
      if (button.disabled) {  // a blocked draft (the page says why), or no server
        say("Not approved: " + itemOf(draft) + ": its Approve button is turned off " +
          "(a hard gate fails, or the page has lost its server).");
        return;
      }
      sent = draft;
      expectAnswer(draft, "approved");
      button.click();
      return;
    }
    // Y: approve a flagged draft anyway, once A has asked (its button is there).
    if ((key === "y" || key === "Y") && !event.shiftKey && shown !== null) {
      const button = document.querySelector(".__KEY_CLASS__approve_flagged_" + shown + " button");
      if (!button) return;
      event.preventDefault(); event.stopImmediatePropagation();
      if (event.repeat) return;
      // The draft was read before A asked: Y is the acknowledgement, not a new
      // reading (the server still checks the draft is the one on screen).
      expectAnswer(shown, "approved");
      button.click();
      return;
    }
    // A digit outside a text box: the reason box, with that preset in it.
    if (digit && !event.shiftKey && settled() && reasonBox() &&
        document.querySelector(".cd-queue-count")) {
      if (preset(key, reasonBox())) { event.preventDefault(); event.stopImmediatePropagation(); }
      return;
    }
    const lower = key === "?" ? key : (event.shiftKey ? "" : key.toLowerCase());
    if (!Object.hasOwn(NAMES, lower)) return;
    // Only on the queue (its count line), or while a page is being drawn: the
    // other views leave these keys to Streamlit (R is its "rerun").
    if (settled() && !document.querySelector(".cd-queue-count")) return;
    // Ours, not Streamlit's: its own J/K/N/P handler would click a button that
    // may not be painted yet, and lose the press.
    event.preventDefault(); event.stopImmediatePropagation();
    if (event.repeat) return;
    waiting.push({key: lower, at: keysNow()});
    flush();
  }, true);
})();
</script>""").replace("__PRESS_MARK__", streamlit_adapter.PRESS_MARK)
_DWELL_SLOT = "const DWELL_MS = __DWELL_MS__;"


def keys_script(dwell_seconds: float) -> str:
    """The keyboard script with the dwell time in whole milliseconds."""
    return _KEYS_TEMPLATE.replace(_DWELL_SLOT, f"const DWELL_MS = {round(dwell_seconds * 1000)};")


def draft_marker(item_id: int, version: int) -> str:
    """Drawn last on the page of a draft: the keyboard script's "this draft is on
    screen" (two integers, nothing else)."""
    return f'<span class="cd-draft cd-draft-{int(item_id)}-{int(version)}" hidden></span>'


# The answer marker's container is never shown and takes no room (no gap in the
# page's column): it is drawn in every run, first, so the page does not move.
_ANSWER_STYLE = f"<style>.{streamlit_adapter.KEY_CLASS}answer_marker{{display:none}}</style>"
_ANSWERED = r'<span class="cd-answered cd-answered-[a-z0-9]+" hidden></span>'


def answer_marker() -> None:
    """Drawn first in every page run (review_ui/app.py): the id of the press that
    started it (the keyboard script's "that press was answered"), or nothing. The
    id is checked against a fixed alphabet of at most 40 letters and digits."""
    press = streamlit_adapter.press_id()
    mark = f'<span class="cd-answered cd-answered-{press}" hidden></span>' if press else ""
    with st.container(key="answer_marker"):
        st.html(_ANSWER_STYLE + mark)


# Blurs a sidebar box after a filter change; the counter makes each one a new
# script, which Streamlit runs again.
_REFOCUS_SCRIPT = streamlit_adapter.fill("""<script>/* refocus %d */
(() => {
  const el = document.activeElement;
  if (el && el !== document.body && el.closest('__SIDEBAR__')) el.blur();
})();
</script>""")


def own_script(body: str) -> bool:
    """True for the scripts this module draws (tests tell them from article text)."""
    dwell = re.sub(r"const DWELL_MS = \d+;", _DWELL_SLOT, body, count=1)
    return (
        dwell == _KEYS_TEMPLATE
        or body.startswith("<script>/* refocus ")
        or re.fullmatch(r'<span class="cd-draft cd-draft-\d+-\d+" hidden></span>', body) is not None
        or re.fullmatch(re.escape(_ANSWER_STYLE) + f"({_ANSWERED})?", body) is not None
    )


def filters_changed() -> None:
    """Called by the sidebar filters' on_change: ask the next run to free the keys."""
    st.session_state[REFOCUS] = st.session_state.get(REFOCUS, 0) + 1


def install(dwell_seconds: float) -> None:
    """The keyboard script, and the blur a filter change asked for."""
    st.html(keys_script(dwell_seconds), unsafe_allow_javascript=True, width="content")
    pending = st.session_state.get(REFOCUS, 0)
    if pending:
        st.html(_REFOCUS_SCRIPT % pending, unsafe_allow_javascript=True, width="content")


def help_html(presets: Sequence[str] = ()) -> str:
    """The shortcuts as an HTML table, then the preset reasons by number (our own
    text and config.toml's reasons, escaped)."""
    keys = [*SHORTCUTS, *((str(n), f"reason: {r}") for n, r in enumerate(presets[:9], 1))]
    rows = "".join(
        f'<tr><td style="padding:2px 12px 2px 0"><kbd>{html.escape(key)}</kbd></td>'
        f"<td>{html.escape(what)}</td></tr>"
        for key, what in keys
    )
    return f'<table class="cd-keys">{rows}</table>'


def presets_html(presets: Sequence[str]) -> str:
    """The preset reasons as a hidden list the keyboard script reads as text."""
    items = "".join(f"<li>{html.escape(r)}</li>" for r in presets[:9])
    return f'<ol class="cd-presets" hidden>{items}</ol>'


@st.dialog("Keyboard shortcuts")
def _help(presets: Sequence[str]) -> None:
    st.html(help_html(presets))


def _page_first(engine: Engine, filt: QueueFilter, step: int) -> None:
    """Open the first draft of the next (+1) or previous (-1) page of the list."""
    current = st.session_state.get(OPEN)
    with Session(engine) as session:
        position = queue_position(session, filt, current) if current is not None else 1
        page = max(1, (max(position, 1) - 1) // PAGE_SIZE + 1 + step)
        rows = queue_page(session, filt, page=page)
    if not rows:
        return
    st.session_state[OPEN] = rows[0].id  # the list follows the open item to its page


def toolbar(
    engine: Engine, filt: QueueFilter, total: int, presets: Sequence[str], cols: Sequence[Any]
) -> None:
    """Previous page (P), next page (N) and the shortcuts help (?) in three columns
    of the queue's top row (each wide enough for its label at 1024 px with the
    sidebar open, issue 12)."""
    pages = max(1, -(-total // PAGE_SIZE))
    cols[0].button(
        "◀◀ Page",
        key="page_prev",
        shortcut="P",
        disabled=pages == 1,
        on_click=_page_first,
        args=(engine, filt, -1),
        width="stretch",
    )
    cols[1].button(
        "Page ▶▶",
        key="page_next",
        shortcut="N",
        disabled=pages == 1,
        on_click=_page_first,
        args=(engine, filt, 1),
        width="stretch",
    )
    if cols[2].button("Shortcuts (?)", key="keys_help", width="stretch"):
        _help(presets)
